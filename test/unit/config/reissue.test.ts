import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/load.js';
import { reissueRefusal } from '../../../src/rules/batch.js';
import { minimalDoc } from './fixtures.js';

describe('re-issuance (issue 49; HAIP 1.0 §4, ARF ISSU_42)', () => {
  it('off by default per type; the daily limit defaults to 24 and is the operator’s', () => {
    const doc = minimalDoc();
    const config = validateConfig(doc);
    expect(config.credentialTypes[0].reissue).toBeUndefined();
    expect(config.issuance.reissuesPerDay).toBe(24);
    doc.credentialTypes[0].reissue = true;
    doc.issuance = { reissuesPerDay: 5 };
    const on = validateConfig(doc);
    expect(on.credentialTypes[0].reissue).toBe(true);
    expect(on.issuance.reissuesPerDay).toBe(5);
  });

  it('a refresh is refused once the credential expired, or while its SerialNumber is revoked, suspended or unknown', () => {
    const now = 1_800_000_000;
    expect(reissueRefusal(now + 60, 'valid', now)).toBeUndefined();
    expect(reissueRefusal(now, 'valid', now)).toMatch(/validity has ended/);
    expect(reissueRefusal(now + 60, 'revoked', now)).toMatch(/revoked/);
    expect(reissueRefusal(now + 60, 'suspended', now)).toMatch(/suspended/);
    expect(reissueRefusal(now + 60, undefined, now)).toMatch(/no longer known/);
  });
});
