import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../../src/config/load.js';
import { keyAttestationsRequired, levelsFrom } from '../../../src/rules/keyAttestation.js';
import { minimalDoc } from './fixtures.js';

function problems(doc: unknown): string[] {
  try {
    validateConfig(doc);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const withProvider = () => {
  const doc = minimalDoc();
  doc.walletAttestation = { trustedProviders: [{ name: 'p', jwks: { keys: [] } }] };
  return doc;
};

describe('key attestation levels (issue 49; OpenID4VCI 1.0 Appendix D.2, HAIP 1.0 §4.5.1)', () => {
  it('the accepted values are the least level and every stronger one', () => {
    expect(levelsFrom('iso_18045_moderate')).toEqual(['iso_18045_high', 'iso_18045_moderate']);
    expect(levelsFrom('iso_18045_basic')).toHaveLength(4);
    expect(levelsFrom('iso_18045_high')).toEqual(['iso_18045_high']);
    expect(keyAttestationsRequired({})).toBeUndefined();
    expect(keyAttestationsRequired({ keyAttestation: 'optional' })).toBeUndefined();
    expect(keyAttestationsRequired({ keyAttestation: 'required' })).toEqual({});
    expect(
      keyAttestationsRequired({
        keyAttestation: 'required',
        keyAttestationLevels: { userAuthentication: 'iso_18045_high' },
      }),
    ).toEqual({ user_authentication: ['iso_18045_high'] });
  });

  it('levels need keyAttestation: required, and are ISO/IEC 18045 values', () => {
    const doc = withProvider();
    doc.credentialTypes[0].keyAttestationLevels = { keyStorage: 'iso_18045_high' };
    expect(problems(doc)).toEqual([
      'credentialTypes[0] (name EmployeeBadge).keyAttestationLevels: needs keyAttestation: required (the levels are those of the key attestation every proof must carry)',
    ]);
    doc.credentialTypes[0].keyAttestation = 'required';
    expect(problems(doc)).toEqual([]);
    doc.credentialTypes[0].keyAttestationLevels = { keyStorage: 'very_high' };
    expect(
      problems(doc).some((p) =>
        p.startsWith('credentialTypes[0] (name EmployeeBadge).keyAttestationLevels.keyStorage:'),
      ),
    ).toBe(true);
  });
});
