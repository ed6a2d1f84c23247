import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync } from 'node:zlib';
import { calculateJwkThumbprint, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VerificationRefusal, type RefusalReason } from '../../../src/verification/errors.js';
import { IssuerKeys } from '../../../src/verification/issuerKeys.js';
import {
  checkDisclosures,
  verifyPresentation,
  type PresentationContext,
} from '../../../src/verification/presentation.js';
import { disclosure, disclosuresOf, issue, keyPair, present, sha256, type KeyPair } from './fixtures.js';
import { loopbackOutbound } from '../../helpers/outbound.js';

/** a real HTTP server on 127.0.0.1 answering `answer(path)`, for the time of `use` */
async function serving<T>(
  answer: (path: string) => { status: number; body?: string },
  use: (base: string) => Promise<T>,
): Promise<T> {
  const server = createServer((req, res) => {
    const { status, body } = answer(req.url ?? '');
    res.writeHead(status).end(body ?? '');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
const outbound = loopbackOutbound();
afterAll(() => outbound.close());

const OWN = 'https://vc.example.com/wallet';
const VCT = 'https://vc.example.com/types/EmployeeBadge';
const CLIENT_ID = 'redirect_uri:https://vc.example.com/vp/response';
const NONCE = 'n-0S6_WzA2Mj-nonce-of-this-request';
const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };

let issuer: KeyPair;
let holder: KeyPair;
let ctx: PresentationContext;
let credential: string;

beforeAll(async () => {
  issuer = await keyPair('ES256', 'credential-key-1');
  holder = await keyPair('ES256');
  ctx = {
    issuerKeys: new IssuerKeys({ ownIssuer: { issuer: OWN, jwks: { keys: [issuer.publicJwk] } }, trustedIssuers: [] }),
  };
  credential = await issue({ issuer, iss: OWN, vct: VCT, attributes, holder: holder.publicJwk });
});

const expected = { clientId: CLIENT_ID, nonce: NONCE, vct: VCT };
const valid = (overrides: Partial<Parameters<typeof present>[1]> = {}) =>
  present(credential, { holder, aud: CLIENT_ID, nonce: NONCE, ...overrides });

async function refusal(
  presentation: Promise<string> | string,
  opts: { expected?: Partial<typeof expected>; ctx?: PresentationContext } = {},
): Promise<VerificationRefusal> {
  try {
    await verifyPresentation(await presentation, { ...expected, ...opts.expected }, opts.ctx ?? ctx);
  } catch (err) {
    if (err instanceof VerificationRefusal) return err;
    throw err;
  }
  throw new Error('the presentation was accepted');
}

describe('verifying an SD-JWT VC presentation', () => {
  it('accepts a valid presentation and returns the disclosed claims and the holder key thumbprint', async () => {
    const verified = await verifyPresentation(await valid({ disclose: ['FirstName', 'LastName'] }), expected, ctx);
    expect(verified).toMatchObject({ issuer: OWN, vct: VCT, claims: { FirstName: 'Ada', LastName: 'Lovelace' } });
    expect(verified.claims).not.toHaveProperty('Email');
    expect(verified.claims).not.toHaveProperty('cnf');
    expect(verified.claims).not.toHaveProperty('iss');
    expect(verified.disclosed.sort()).toEqual(['FirstName', 'LastName']);
    expect(verified.holderKeyThumbprint).toBe(await calculateJwkThumbprint(holder.publicJwk));
  });

  it('accepts an EdDSA credential from an inline-jwks trusted issuer with an EdDSA holder key', async () => {
    const edIssuer = await keyPair('EdDSA', 'ed-1');
    const edHolder = await keyPair('EdDSA');
    const inline = 'https://inline-issuer.example';
    const context = {
      issuerKeys: new IssuerKeys({
        ownIssuer: { issuer: OWN, jwks: { keys: [] } },
        trustedIssuers: [{ issuer: inline, jwks: { keys: [edIssuer.publicJwk] } }],
      }),
    };
    const cred = await issue({
      issuer: edIssuer,
      alg: 'EdDSA',
      iss: inline,
      vct: VCT,
      attributes,
      holder: edHolder.publicJwk,
    });
    const verified = await verifyPresentation(
      await present(cred, { holder: edHolder, alg: 'EdDSA', aud: CLIENT_ID, nonce: NONCE }),
      expected,
      context,
    );
    expect(verified.claims).toEqual(attributes);
  });

  it('accepts a credential whose attributes are plain (not selectively disclosable) claims', async () => {
    const cred = await issue({
      issuer,
      iss: OWN,
      vct: VCT,
      attributes: {},
      plain: { FirstName: 'Ada' },
      holder: holder.publicJwk,
    });
    const verified = await verifyPresentation(
      await present(cred, { holder, aud: CLIENT_ID, nonce: NONCE }),
      expected,
      ctx,
    );
    expect(verified.claims).toEqual({ FirstName: 'Ada' });
    expect(verified.disclosed).toEqual([]);
  });

  const attacks: Array<[string, RefusalReason, () => Promise<string>, Partial<typeof expected>?]> = [
    [
      'a tampered disclosure',
      'disclosure_not_in_credential',
      async () => {
        const tampered = disclosure('FirstName', 'Mallory');
        return valid({ disclosures: [tampered, disclosuresOf(credential).get('LastName')!] });
      },
    ],
    [
      'a disclosure taken from another credential',
      'disclosure_not_in_credential',
      async () => {
        const other = await issue({
          issuer,
          iss: OWN,
          vct: VCT,
          attributes: { ...attributes, FirstName: 'Grace' },
          holder: holder.publicJwk,
        });
        return valid({
          disclosures: [disclosuresOf(other).get('FirstName')!, disclosuresOf(credential).get('LastName')!],
        });
      },
    ],
    [
      'the same disclosure twice',
      'disclosure_not_in_credential',
      async () =>
        valid({
          disclosures: [disclosuresOf(credential).get('FirstName')!, disclosuresOf(credential).get('FirstName')!],
        }),
    ],
    ['a wrong nonce', 'wrong_nonce', async () => valid({ nonce: 'nonce-of-another-request' })],
    ['a wrong aud', 'wrong_audience', async () => valid({ aud: 'redirect_uri:https://evil.example/vp/response' })],
    ['an aud given as an array', 'wrong_audience', async () => valid({ aud: [CLIENT_ID] as unknown as string })],
    ['a missing KB-JWT', 'key_binding_missing', async () => valid({ noKeyBinding: true })],
    [
      'a KB-JWT signed by another key',
      'key_binding_signature_invalid',
      async () => valid({ holder: await keyPair('ES256') }),
    ],
    ['a KB-JWT with typ JWT', 'key_binding_invalid', async () => valid({ typ: 'JWT' })],
    ['a stale KB-JWT iat', 'stale_key_binding', async () => valid({ iat: Math.floor(Date.now() / 1000) - 400 })],
    [
      'a KB-JWT iat in the future',
      'stale_key_binding',
      async () => valid({ iat: Math.floor(Date.now() / 1000) + 120 }),
    ],
    ['a wrong sd_hash', 'wrong_sd_hash', async () => valid({ sdHash: sha256('something else') })],
    [
      'an sd_hash over other disclosures',
      'wrong_sd_hash',
      async () => {
        const genuine = await valid({ disclose: ['FirstName'] });
        const [jwt, first] = genuine.split('~');
        const kb = genuine.split('~').pop()!;
        return `${jwt}~${first}~${disclosuresOf(credential).get('LastName')}~${kb}`;
      },
    ],
    [
      'an expired credential',
      'credential_expired',
      async () => {
        const expired = await issue({
          issuer,
          iss: OWN,
          vct: VCT,
          attributes,
          holder: holder.publicJwk,
          claims: { exp: Math.floor(Date.now() / 1000) - 60 },
        });
        return present(expired, { holder, aud: CLIENT_ID, nonce: NONCE });
      },
    ],
    [
      'a credential not valid yet',
      'credential_not_yet_valid',
      async () => {
        const early = await issue({
          issuer,
          iss: OWN,
          vct: VCT,
          attributes,
          holder: holder.publicJwk,
          claims: { nbf: Math.floor(Date.now() / 1000) + 600 },
        });
        return present(early, { holder, aud: CLIENT_ID, nonce: NONCE });
      },
    ],
    [
      'a credential signed by an unknown key id',
      'unknown_issuer_key',
      async () => {
        const forged = await issue({
          issuer: await keyPair('ES256', 'not-our-key'),
          iss: OWN,
          vct: VCT,
          attributes,
          holder: holder.publicJwk,
        });
        return present(forged, { holder, aud: CLIENT_ID, nonce: NONCE });
      },
    ],
    [
      'a credential signed by another key under our key id',
      'issuer_signature_invalid',
      async () => {
        const forged = await issue({
          issuer: await keyPair('ES256', 'credential-key-1'),
          iss: OWN,
          vct: VCT,
          attributes,
          holder: holder.publicJwk,
        });
        return present(forged, { holder, aud: CLIENT_ID, nonce: NONCE });
      },
    ],
    [
      'a credential of an issuer that is not trusted',
      'issuer_not_trusted',
      async () => {
        const foreign = await issue({
          issuer,
          iss: 'https://other-issuer.example',
          vct: VCT,
          attributes,
          holder: holder.publicJwk,
        });
        return present(foreign, { holder, aud: CLIENT_ID, nonce: NONCE });
      },
    ],
    ['a credential of another vct', 'wrong_vct', async () => valid(), { vct: 'https://vc.example.com/types/Other' }],
    [
      'a credential without cnf',
      'holder_key_missing',
      async () => {
        const unbound = await issue({ issuer, iss: OWN, vct: VCT, attributes });
        return present(unbound, { holder, aud: CLIENT_ID, nonce: NONCE });
      },
    ],
    [
      'a credential with typ JWT',
      'unsupported_credential',
      async () => {
        const plain = await issue({ issuer, iss: OWN, vct: VCT, attributes, holder: holder.publicJwk, typ: 'JWT' });
        return present(plain, { holder, aud: CLIENT_ID, nonce: NONCE });
      },
    ],
    [
      'a credential signed with alg none',
      'unsupported_credential',
      async () => {
        const [jwt, ...rest] = (await valid()).split('~');
        const [, payload] = jwt.split('.');
        const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'dc+sd-jwt' })).toString('base64url');
        return [`${header}.${payload}.`, ...rest].join('~');
      },
    ],
    [
      'a disclosure that would overwrite a signed claim',
      'malformed_presentation',
      async () => {
        const sneaky = disclosure('vct', 'https://vc.example.com/types/Admin');
        const cred = await issue({
          issuer,
          iss: OWN,
          vct: VCT,
          attributes: {},
          holder: holder.publicJwk,
          claims: { _sd: [sha256(sneaky)] },
        });
        return present(`${cred.slice(0, -1)}${sneaky}~`, { holder, aud: CLIENT_ID, nonce: NONCE });
      },
    ],
    ['garbage', 'malformed_presentation', async () => 'not-an-sd-jwt'],
    ['a JWT that is not one', 'malformed_presentation', async () => 'abc.def.ghi~kb'],
  ];

  it.each(attacks)('refuses %s (%s)', async (_name, reason, make, override) => {
    const refused = await refusal(make(), { expected: override });
    expect(refused.reason).toBe(reason);
    expect(refused.message).not.toMatch(/Ada|Lovelace|Mallory|Grace/); // never a claim value
  });

  it('refuses when the issuer keys cannot be fetched', async () => {
    await serving(
      () => ({ status: 503, body: 'nope' }),
      async (down) => {
        const context = {
          issuerKeys: new IssuerKeys({
            ownIssuer: { issuer: OWN, jwks: { keys: [] } },
            trustedIssuers: [{ issuer: down }],
            outbound,
          }),
        };
        const cred = await issue({ issuer, iss: down, vct: VCT, attributes, holder: holder.publicJwk });
        const refused = await refusal(present(cred, { holder, aud: CLIENT_ID, nonce: NONCE }), { ctx: context });
        expect(refused.reason).toBe('issuer_keys_unavailable');
      },
    );
  });

  it('names the key id the issuer does not have, and tells a bad signature from an unknown key', async () => {
    const stranger = await issue({
      issuer: await keyPair('ES256', 'not-our-key'),
      iss: OWN,
      vct: VCT,
      attributes,
      holder: holder.publicJwk,
    });
    expect((await refusal(present(stranger, { holder, aud: CLIENT_ID, nonce: NONCE }))).message).toBe(
      `issuer ${OWN} has no key with the credential's kid`,
    );
    const impostor = await issue({
      issuer: await keyPair('ES256', 'credential-key-1'),
      iss: OWN,
      vct: VCT,
      attributes,
      holder: holder.publicJwk,
    });
    expect((await refusal(present(impostor, { holder, aud: CLIENT_ID, nonce: NONCE }))).message).toBe(
      "the credential signature does not verify with the issuer's keys",
    );
  });

  it('accepts a credential without kid from an issuer with several keys: each key that fits is tried', async () => {
    const [first, second] = await Promise.all([keyPair('ES256'), keyPair('ES256')]);
    const several = 'https://several-keys.example';
    const context = {
      issuerKeys: new IssuerKeys({
        ownIssuer: { issuer: OWN, jwks: { keys: [] } },
        trustedIssuers: [{ issuer: several, jwks: { keys: [first.publicJwk, second.publicJwk] } }],
      }),
    };
    const cred = await issue({
      issuer: second,
      iss: several,
      vct: VCT,
      attributes,
      holder: holder.publicJwk,
      kid: null,
    });
    await expect(
      verifyPresentation(await present(cred, { holder, aud: CLIENT_ID, nonce: NONCE }), expected, context),
    ).resolves.toMatchObject({ issuer: several });
    const other = await issue({
      issuer: await keyPair('ES256'),
      iss: several,
      vct: VCT,
      attributes,
      holder: holder.publicJwk,
      kid: null,
    });
    expect((await refusal(present(other, { holder, aud: CLIENT_ID, nonce: NONCE }), { ctx: context })).reason).toBe(
      'issuer_signature_invalid',
    );
  });

  it('refuses with issuer_keys_unavailable when a trusted jwks_uri does not answer in time', async () => {
    const hung = createServer(() => undefined);
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    try {
      const jwksUri = `http://127.0.0.1:${(hung.address() as AddressInfo).port}/jwks`;
      const slow = 'https://slow.example';
      const context = {
        issuerKeys: new IssuerKeys({
          ownIssuer: { issuer: OWN, jwks: { keys: [] } },
          trustedIssuers: [{ issuer: slow, jwksUri }],
          timeoutMs: 200,
          outbound,
        }),
      };
      const cred = await issue({ issuer, iss: slow, vct: VCT, attributes, holder: holder.publicJwk });
      const refused = await refusal(present(cred, { holder, aud: CLIENT_ID, nonce: NONCE }), { ctx: context });
      expect(refused.reason).toBe('issuer_keys_unavailable');
      expect(refused.message).toBe(`the keys of issuer ${slow} are unavailable: fetching the issuer JWKS timed out`);
    } finally {
      hung.closeAllConnections();
      await new Promise((resolve) => hung.close(resolve));
    }
  });

  it('accepts the clock tolerance on exp and the key binding iat, not more', async () => {
    const now = Math.floor(Date.now() / 1000);
    const justExpired = await issue({
      issuer,
      iss: OWN,
      vct: VCT,
      attributes,
      holder: holder.publicJwk,
      claims: { exp: now - 10 },
    });
    await expect(
      verifyPresentation(await present(justExpired, { holder, aud: CLIENT_ID, nonce: NONCE }), expected, {
        ...ctx,
        clockTolerance: 30,
      }),
    ).resolves.toBeDefined();
    expect(
      (
        await refusal(present(justExpired, { holder, aud: CLIENT_ID, nonce: NONCE }), {
          ctx: { ...ctx, clockTolerance: 5 },
        })
      ).reason,
    ).toBe('credential_expired');
    await expect(verifyPresentation(await valid({ iat: now - 320 }), expected, ctx)).resolves.toBeDefined();
    expect((await refusal(valid({ iat: now - 340 }))).reason).toBe('stale_key_binding');
  });
});

describe('the status of a credential (draft-ietf-oauth-status-list)', () => {
  const statusList = async (signer: KeyPair, statusUri: string) =>
    new SignJWT({
      sub: statusUri,
      iat: Math.floor(Date.now() / 1000),
      status_list: { bits: 1, lst: deflateSync(Buffer.from([0b0000_0010])).toString('base64url') },
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'statuslist+jwt', kid: signer.privateJwk.kid })
      .sign(await importJWK(signer.privateJwk, 'ES256'));
  /** a list server signing with `signer` (or answering 503 without one), and a context that fetches from it */
  const withList = <T>(
    signer: KeyPair | undefined,
    use: (statusUri: string, context: PresentationContext) => Promise<T>,
  ): Promise<T> => {
    let jwt: string | undefined;
    return serving(
      (path) => (path === '/status/1' && jwt ? { status: 200, body: jwt } : { status: 503 }),
      async (base) => {
        const statusUri = `${base}/status/1`;
        if (signer) jwt = await statusList(signer, statusUri);
        return use(statusUri, { ...ctx, outbound });
      },
    );
  };
  const withStatus = async (idx: number, statusUri: string) => {
    const cred = await issue({
      issuer,
      iss: OWN,
      vct: VCT,
      attributes,
      holder: holder.publicJwk,
      claims: { status: { status_list: { idx, uri: statusUri } } },
    });
    return present(cred, { holder, aud: CLIENT_ID, nonce: NONCE });
  };

  it('is checked with the issuer keys when the credential references a status list', async () => {
    await withList(issuer, async (uri, context) => {
      await expect(verifyPresentation(await withStatus(0, uri), expected, context)).resolves.toMatchObject({
        claims: attributes,
      });
      expect(await refusal(withStatus(1, uri), { ctx: context })).toMatchObject({
        reason: 'credential_revoked',
        message: 'credential revoked',
      });
    });
  });

  it('refuses a status list not signed by the issuer, or that cannot be fetched', async () => {
    await withList(await keyPair('ES256', 'credential-key-1'), async (uri, forged) => {
      expect((await refusal(withStatus(0, uri), { ctx: forged })).reason).toBe('credential_status_invalid');
    });
    await withList(undefined, async (uri, down) => {
      expect((await refusal(withStatus(0, uri), { ctx: down })).reason).toBe('credential_status_unavailable');
      await expect(
        verifyPresentation(await withStatus(0, uri), expected, { ...down, onStatusUnavailable: 'accept' }),
      ).resolves.toMatchObject({ claims: attributes });
    });
  });
});

describe('checking disclosures against the credential digests', () => {
  it('follows nested and array disclosures and names only the top-level ones', () => {
    const street = disclosure('street', 'Main St');
    const address = disclosure('address', { _sd: [sha256(street)] });
    const element = Buffer.from(JSON.stringify(['salt', 'DE'])).toString('base64url');
    const payload = { _sd: [sha256(address)], nationalities: [{ '...': sha256(element) }, 'FR'] };
    expect(checkDisclosures(payload, [address, street, element], 'sha-256')).toEqual(['address']);
  });

  it('refuses claims nested deeper than it is willing to walk before the signature is checked', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 40; i++) deep = [deep];
    expect(() => checkDisclosures({ deep }, [], 'sha-256')).toThrow(/deeper than/);
  });

  it('refuses an array element disclosure used as an object property', () => {
    const element = Buffer.from(JSON.stringify(['salt', 'DE'])).toString('base64url');
    expect(() => checkDisclosures({ _sd: [sha256(element)] }, [element], 'sha-256')).toThrow(VerificationRefusal);
  });
});
