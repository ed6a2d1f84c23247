import { describe, it, expect } from 'vitest';
import { ConfigError, validateConfig } from '../../../src/config/load.js';
import { minimalDoc } from './fixtures.js';

/** Issue 18 (D12): the `identity` blocks, the operator's contract, checked at start with every problem by its path. */
function problems(doc: unknown): string[] {
  try {
    validateConfig(doc);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const pid = { trustedIssuers: [{ issuer: 'https://pid.example', jwksUri: 'https://pid.example/jwks' }] };
const other = {
  displayName: 'Example ID check',
  issuer: 'https://idv.example',
  clientId: 'ours',
  clientSecret: 'secret',
  claims: { given_name: 'given_name' },
};

describe('identity blocks (issue 18 Configuration)', () => {
  it('fills the defaults: the EU PID type, given_name/family_name/birthdate required, client_secret_basic, openid', () => {
    const doc = minimalDoc();
    doc.identity = { VerifiedIdentity: pid, VerifiedIdentity_Other: other };
    doc.clients[0].scopes.push('VerifiedIdentity', 'VerifiedIdentity_Other');
    const config = validateConfig(doc);
    expect(config.identity.VerifiedIdentity).toMatchObject({
      vct: ['urn:eudi:pid:1'],
      claims: ['given_name', 'family_name', 'birthdate'],
      optionalClaims: [],
    });
    expect(config.identity.VerifiedIdentity_Other).toMatchObject({
      clientAuth: 'client_secret_basic',
      scopes: ['openid'],
      verifiedClaims: false,
    });
  });

  it('refuses a client that lists an identity scope whose block is missing, naming the path', () => {
    const doc = minimalDoc();
    doc.clients[0].scopes.push('VerifiedIdentity', 'VerifiedIdentity_Other');
    expect(problems(doc)).toEqual([
      'identity.VerifiedIdentity: is required: clients[0] lists the scope VerifiedIdentity',
      'identity.VerifiedIdentity_Other: is required: clients[0] lists the scope VerifiedIdentity_Other',
    ]);
  });

  it.each(['http://idv.example', 'http://10.0.0.1'])('refuses an http:// issuer off loopback (%s)', (issuer) => {
    const doc = minimalDoc();
    doc.identity = { VerifiedIdentity_Other: { ...other, issuer }, VerifiedIdentity: { trustedIssuers: [{ issuer }] } };
    expect(problems(doc)).toEqual([
      'identity.VerifiedIdentity.trustedIssuers[0].issuer: must be an https issuer (http only on a loopback host), without user, password, query or fragment',
      'identity.VerifiedIdentity_Other.issuer: must be an https issuer (http only on a loopback host), without user, password, query or fragment',
    ]);
  });

  it.each(['http://localhost:4000/idv', 'http://127.0.0.1:4000', 'http://[::1]:4000'])(
    'accepts an http:// issuer on a loopback host (%s, development)',
    (issuer) => {
      const doc = minimalDoc();
      doc.identity = { VerifiedIdentity_Other: { ...other, issuer } };
      expect(problems(doc)).toEqual([]);
    },
  );

  it('refuses reserved claim names, a claim listed twice, scopes without openid, and an empty claim mapping', () => {
    const doc = minimalDoc();
    doc.identity = {
      VerifiedIdentity: { ...pid, claims: ['given_name', 'nonce'], optionalClaims: ['given_name'] },
      VerifiedIdentity_Other: { ...other, scopes: ['profile'], claims: {} },
    };
    expect(problems(doc).sort()).toEqual(
      [
        'identity.VerifiedIdentity.claims[1]: is a reserved claim name',
        'identity.VerifiedIdentity_Other.scopes: must contain openid',
        'identity.VerifiedIdentity_Other.claims: must map at least one claim',
        'identity.VerifiedIdentity.optionalClaims[0]: given_name is listed twice',
      ].sort(),
    );
  });

  it('refuses a VerifiedIdentity block without trusted issuers', () => {
    const doc = minimalDoc();
    doc.identity = { VerifiedIdentity: {} };
    expect(problems(doc)).toEqual([
      'identity.VerifiedIdentity.trustedIssuers: Invalid input: expected array, received undefined',
    ]);
  });
});
