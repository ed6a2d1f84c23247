import { calculateJwkThumbprint } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { CredentialType } from '../../../src/config/schema.js';
import { dcqlQueryFor } from '../../../src/verification/dcql.js';
import { VerificationRefusal, type RefusalReason } from '../../../src/verification/errors.js';
import { IssuerKeys } from '../../../src/verification/issuerKeys.js';
import {
  readVpToken,
  verifyResponse,
  VP_TOKEN_LIMIT,
  type ResponseExpectations,
} from '../../../src/verification/response.js';
import { issue, keyPair, present, type KeyPair } from './fixtures.js';

const BASE = 'https://vc.example.com';
const OWN = `${BASE}/wallet`;
const CLIENT_ID = `redirect_uri:${BASE}/vp/response`;
const NONCE = 'nonce-of-this-request-0123456789';

const badge: CredentialType = {
  name: 'EmployeeBadge',
  validity: 'P365D',
  attributes: {
    FirstName: { type: 'string', required: true },
    LastName: { type: 'string', required: true },
    Email: { type: 'email', required: false },
  },
};
const membership: CredentialType = {
  name: 'Membership',
  validity: 'P365D',
  attributes: { MemberId: { type: 'string', required: true }, FirstName: { type: 'string', required: true } },
};
const vct = (t: CredentialType) => `${BASE}/types/${t.name}`;

let issuer: KeyPair;
let holder: KeyPair;
let otherHolder: KeyPair;
let ctx: { issuerKeys: IssuerKeys };
let badgeCredential: string;
let membershipCredential: string;

beforeAll(async () => {
  issuer = await keyPair('ES256', 'k1');
  holder = await keyPair();
  otherHolder = await keyPair();
  ctx = {
    issuerKeys: new IssuerKeys({ ownIssuer: { issuer: OWN, jwks: { keys: [issuer.publicJwk] } }, trustedIssuers: [] }),
  };
  badgeCredential = await issue({
    issuer,
    iss: OWN,
    vct: vct(badge),
    attributes: { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' },
    holder: holder.publicJwk,
  });
  membershipCredential = await issue({
    issuer,
    iss: OWN,
    vct: vct(membership),
    attributes: { MemberId: 'M-1', FirstName: 'Augusta' },
    holder: otherHolder.publicJwk,
  });
});

const expectations = (...types: CredentialType[]): ResponseExpectations => ({
  query: dcqlQueryFor(types, BASE),
  claimNames: new Map(types.map((t) => [t.name, Object.keys(t.attributes)])),
  clientId: CLIENT_ID,
  nonce: NONCE,
  responseUri: `${BASE}/vp/response`,
});
const kb = (h: KeyPair, disclose?: string[]) => ({
  holder: h,
  aud: CLIENT_ID,
  nonce: NONCE,
  ...(disclose ? { disclose } : {}),
});

function refusalOf(fn: () => unknown): VerificationRefusal {
  try {
    fn();
  } catch (err) {
    if (err instanceof VerificationRefusal) return err;
    throw err;
  }
  throw new Error('accepted');
}

async function refusalOfAsync(promise: Promise<unknown>): Promise<VerificationRefusal> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof VerificationRefusal) return err;
    throw err;
  }
  throw new Error('accepted');
}

describe('reading the vp_token', () => {
  const query = dcqlQueryFor([badge], BASE);

  it('reads { <query id>: [presentation] }', () => {
    expect([...readVpToken(JSON.stringify({ EmployeeBadge: ['a~b~c'] }), query)]).toEqual([['EmployeeBadge', 'a~b~c']]);
  });

  const cases: Array<[string, unknown, RefusalReason, string]> = [
    ['missing', undefined, 'malformed_response', 'vp_token: required'],
    ['given twice', ['{}', '{}'], 'malformed_response', 'vp_token: must appear once'],
    [
      'oversized',
      JSON.stringify({ EmployeeBadge: ['x'.repeat(VP_TOKEN_LIMIT)] }),
      'vp_token_too_large',
      'vp_token: exceeds',
    ],
    ['malformed JSON', '{"EmployeeBadge": [', 'malformed_response', 'vp_token: not valid JSON'],
    [
      'a bare presentation (pre-1.0)',
      'eyJhbGciOiJFUzI1NiJ9.e30.sig~',
      'malformed_response',
      'vp_token: not valid JSON',
    ],
    ['a JSON array', '["a~b"]', 'malformed_response', 'vp_token: must be a JSON object'],
    [
      'a string value instead of an array',
      JSON.stringify({ EmployeeBadge: 'a~b' }),
      'malformed_response',
      'vp_token.EmployeeBadge: must be a non-empty array',
    ],
    [
      'an empty array',
      JSON.stringify({ EmployeeBadge: [] }),
      'malformed_response',
      'vp_token.EmployeeBadge: must be a non-empty array',
    ],
    [
      'an object presentation',
      JSON.stringify({ EmployeeBadge: [{ a: 1 }] }),
      'malformed_response',
      'vp_token.EmployeeBadge[0]: a dc+sd-jwt presentation must be a non-empty string',
    ],
    [
      'two presentations for one query',
      JSON.stringify({ EmployeeBadge: ['a~', 'b~'] }),
      'too_many_presentations',
      'vp_token.EmployeeBadge: exactly one',
    ],
    [
      'a query id that was not asked for',
      JSON.stringify({ EmployeeBadge: ['a~'], Membership: ['b~'] }),
      'unrequested_credential',
      'vp_token: a key is not the id of any credential query',
    ],
    ['no answer for the query', JSON.stringify({}), 'missing_credential', 'vp_token.EmployeeBadge: missing'],
  ];
  it.each(cases)('refuses a vp_token %s, naming the field', (_name, raw, reason, description) => {
    const refused = refusalOf(() => readVpToken(raw, query));
    expect(refused.reason).toBe(reason);
    expect(refused.error).toBe('invalid_request');
    expect(refused.message).toContain(description);
  });
});

describe('verifying the presentations against the query', () => {
  it('returns the requested claims of one type, and the holder key thumbprint', async () => {
    const presentation = await present(badgeCredential, kb(holder));
    const result = await verifyResponse(new Map([['EmployeeBadge', presentation]]), expectations(badge), ctx);
    expect(result).toEqual({
      holderKeyThumbprint: await calculateJwkThumbprint(holder.publicJwk),
      issuer: OWN,
      claims: { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' },
      types: ['EmployeeBadge'],
      issuers: { EmployeeBadge: { format: 'dc+sd-jwt', iss: OWN } },
    });
  });

  it('accepts the fallback claim set (required attributes only)', async () => {
    const presentation = await present(badgeCredential, kb(holder, ['FirstName', 'LastName']));
    const result = await verifyResponse(new Map([['EmployeeBadge', presentation]]), expectations(badge), ctx);
    expect(result.claims).toEqual({ FirstName: 'Ada', LastName: 'Lovelace' });
  });

  it("merges two types; the sub is the first type's holder key; a shared attribute comes from the first type", async () => {
    const presentations = new Map([
      ['EmployeeBadge', await present(badgeCredential, kb(holder))],
      ['Membership', await present(membershipCredential, kb(otherHolder))],
    ]);
    const result = await verifyResponse(presentations, expectations(badge, membership), ctx);
    expect(result.claims).toEqual({
      FirstName: 'Ada',
      LastName: 'Lovelace',
      Email: 'ada@example.com',
      MemberId: 'M-1',
    });
    expect(result.types).toEqual(['EmployeeBadge', 'Membership']);
    expect(result.holderKeyThumbprint).toBe(await calculateJwkThumbprint(holder.publicJwk));
  });

  it('refuses a credential of a type not asked for, presented under a requested query id', async () => {
    const presentation = await present(membershipCredential, kb(otherHolder));
    const refused = await refusalOfAsync(
      verifyResponse(new Map([['EmployeeBadge', presentation]]), expectations(badge), ctx),
    );
    expect(refused.reason).toBe('wrong_vct');
    expect(refused.message).toMatch(/^vp_token\.EmployeeBadge: /);
  });

  it('refuses a presentation that does not disclose a required claim, naming it', async () => {
    const presentation = await present(badgeCredential, kb(holder, ['FirstName', 'Email']));
    const refused = await refusalOfAsync(
      verifyResponse(new Map([['EmployeeBadge', presentation]]), expectations(badge), ctx),
    );
    expect(refused.reason).toBe('missing_claims');
    expect(refused.message).toBe('vp_token.EmployeeBadge: the presentation does not disclose LastName');
  });

  it('refuses the whole response when one of two presentations fails', async () => {
    const presentations = new Map([
      ['EmployeeBadge', await present(badgeCredential, kb(holder))],
      ['Membership', await present(membershipCredential, { ...kb(otherHolder), nonce: 'another-request' })],
    ]);
    const refused = await refusalOfAsync(verifyResponse(presentations, expectations(badge, membership), ctx));
    expect(refused.reason).toBe('wrong_nonce');
    expect(refused.message).toMatch(/^vp_token\.Membership: /);
  });
});
