/**
 * Issue 50, "registration certificates", start-up: each client's registration certificate (ETSI TS 119 475,
 * rc-wrp+jwt) verified against the configured registrars (signature with jose, x5c by RFC 5280 path
 * validation), within its validity, for the configured client, and registering what the client's
 * verification scopes ask for. Every refusal names where it was configured.
 */
// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRegistrar, registrationClaims, sdJwtRegistered, type TestRegistrar } from '../../helpers/registrar.js';
import { makeCert } from '../../helpers/pki.js';
import {
  loadRegistrations,
  VERIFIER_INFO_FORMAT,
  type AskedFor,
  type ClientRegistrationConfig,
} from '../../../src/verification/registration.js';
import { dcqlQueryFor } from '../../../src/verification/dcql.js';
import { pidRequestKind } from '../../../src/identity/pid.js';
import type { CredentialType } from '../../../src/config/schema.js';
import { validateConfig } from '../../../src/config/load.js';
import { minimalDoc, problemsOf } from '../config/fixtures.js';

const BADGE_VCT = 'https://badges.example/vct/badge';
const CARD_VCT = 'https://badges.example/vct/card';
const types = new Map<string, CredentialType>(
  [
    {
      name: 'Badge',
      vct: BADGE_VCT,
      attributes: { FirstName: { type: 'string', required: true }, Email: { type: 'email', required: false } },
    },
    { name: 'Card', vct: CARD_VCT, attributes: { MemberName: { type: 'string', required: true } } },
  ].map((t) => [t.name, t as unknown as CredentialType]),
);
const queryOf = (asked: AskedFor) =>
  dcqlQueryFor(
    ('credentialTypes' in asked ? asked.credentialTypes : []).map((n) => types.get(n)!),
    'https://vc.example',
  );
const asked = (scope: string): AskedFor | undefined => (types.has(scope) ? { credentialTypes: [scope] } : undefined);

let registrar: TestRegistrar;
let dir: string;
const BOTH = [sdJwtRegistered(BADGE_VCT, ['FirstName', 'Email']), sdJwtRegistered(CARD_VCT, ['MemberName'])];

beforeAll(async () => {
  registrar = await makeRegistrar();
  dir = mkdtempSync(join(tmpdir(), 'vc-registration-'));
  writeFileSync(join(dir, 'registrar.pem'), registrar.root.pem);
});

/** Writes `jwt` and loads it as the registration of client `rp-1` (subject LEIXG-RP1) with `scopes`. */
async function load(jwt: string, scopes = ['Badge'], o: { registrars?: string[]; subject?: string } = {}) {
  const file = `rc-${Math.random().toString(36).slice(2)}.jwt`;
  writeFileSync(join(dir, file), `${jwt}\n`);
  const clients: ClientRegistrationConfig[] = [
    { clientId: 'plain', scopes: ['Badge'] },
    { clientId: 'rp-1', scopes, registration: { subject: o.subject ?? 'LEIXG-RP1', certificates: [file] } },
  ];
  return loadRegistrations(clients, {
    registrars: o.registrars ?? ['registrar.pem'],
    baseDir: dir,
    queryOf,
    asked,
  });
}

describe('a registration certificate that holds', () => {
  it('is loaded for its client, and its requests carry it in verifier_info (OpenID4VP 1.0 §5.1)', async () => {
    const jwt = registrar.certificate(registrationClaims('LEIXG-RP1', BOTH));
    const registrations = await load(jwt, ['Badge', 'Card']);
    const [r] = registrations.of('rp-1');
    expect(r).toMatchObject({ subject: 'LEIXG-RP1', name: 'LEIXG-RP1 service', registrar: 'CN=Test Registrar, C=EU' });
    expect(registrations.verifierInfo('rp-1', queryOf({ credentialTypes: ['Badge'] }))).toEqual([
      { format: VERIFIER_INFO_FORMAT, data: jwt },
    ]);
    // a client without a registration certificate sends none
    expect(registrations.of('plain')).toEqual([]);
    expect(registrations.verifierInfo('plain', queryOf({ credentialTypes: ['Badge'] }))).toBeUndefined();
    expect(registrations.verifierInfo(undefined, queryOf({ credentialTypes: ['Badge'] }))).toBeUndefined();
  });

  it("the x5c may end at the registrar's root", async () => {
    const jwt = registrar.certificate(registrationClaims('LEIXG-RP1', BOTH), {
      x5c: [registrar.signer.b64, registrar.root.b64],
    });
    expect((await load(jwt)).of('rp-1')).toHaveLength(1);
  });

  it('without exp (optional in ETSI TS 119 475) it holds', async () => {
    const jwt = registrar.certificate(registrationClaims('LEIXG-RP1', BOTH, { exp: undefined }));
    expect((await load(jwt)).of('rp-1')[0].expiresAt).toBeUndefined();
  });
});

describe('bad registration certificates: a start-up error naming the client and the file', () => {
  const where = /clients\[1\] \(rp-1\) registration\.certificates\[0\] \(.*rc-.*\.jwt\)/;

  it("another relying party's certificate (its sub is not the configured subject)", async () => {
    const jwt = registrar.certificate(registrationClaims('LEIXG-SOMEONE-ELSE', BOTH));
    await expect(load(jwt)).rejects.toThrow(where);
    await expect(load(jwt)).rejects.toThrow(
      /registers "LEIXG-SOMEONE-ELSE", not this client's registration\.subject "LEIXG-RP1"/,
    );
  });

  it('an expired one', async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = registrar.certificate(registrationClaims('LEIXG-RP1', BOTH, { iat: now - 7200, exp: now - 3600 }));
    await expect(load(jwt)).rejects.toThrow(/has expired \(exp .*\): ask the registrar for a new one/);
  });

  it('one not valid yet (nbf, or issued in the future)', async () => {
    const now = Math.floor(Date.now() / 1000);
    await expect(
      load(registrar.certificate(registrationClaims('LEIXG-RP1', BOTH, { nbf: now + 3600 }))),
    ).rejects.toThrow(/nbf/);
    await expect(
      load(registrar.certificate(registrationClaims('LEIXG-RP1', BOTH, { iat: now + 3600 }))),
    ).rejects.toThrow(/issued in the future/);
  });

  it('one signed by a registrar that is not configured', async () => {
    const stranger = await makeRegistrar('Stranger');
    const jwt = stranger.certificate(registrationClaims('LEIXG-RP1', BOTH));
    await expect(load(jwt)).rejects.toThrow(/its x5c does not chain to a registrar of verifier\.registrars/);
  });

  it("one whose signature is not its x5c leaf's (an unknown key, the registrar's certificate borrowed)", async () => {
    const stranger = await makeRegistrar('Stranger');
    const jwt = stranger.certificate(registrationClaims('LEIXG-RP1', BOTH), { x5c: [registrar.signer.b64] });
    await expect(load(jwt)).rejects.toThrow(/its signature does not verify with the key of its x5c's leaf/);
  });

  it('one whose claims were changed after signing', async () => {
    const [h, , s] = registrar.certificate(registrationClaims('LEIXG-RP1', BOTH)).split('.');
    const forged = Buffer.from(JSON.stringify(registrationClaims('LEIXG-RP1', BOTH, { name: 'Forged' }))).toString(
      'base64url',
    );
    await expect(load(`${h}.${forged}.${s}`)).rejects.toThrow(/signature does not verify/);
  });

  it('an expired signing certificate', async () => {
    const expiredLeaf = await makeCert({
      subject: 'CN=Old signer',
      issuer: registrar.root,
      notBefore: new Date(Date.now() - 20 * 86_400_000),
      notAfter: new Date(Date.now() - 86_400_000),
    });
    const signed = (await makeRegistrar()).certificate(registrationClaims('LEIXG-RP1', BOTH), {
      x5c: [expiredLeaf.b64],
    });
    await expect(load(signed)).rejects.toThrow(/does not chain to a registrar.*expired/);
  });

  it.each([
    [{ typ: 'rc-rp+jwt' }, /typ is "rc-rp\+jwt", not rc-wrp\+jwt/],
    [{ typ: 'JWT' }, /typ is "JWT"/],
    [{ alg: 'HS256' }, /alg "HS256" is not accepted/],
    [{ alg: 'none' }, /alg "none" is not accepted/],
    [{ x5c: [] }, /has no x5c/],
    [{ x5c: 'MIIB' }, /has no x5c/],
    [{ x5c: ['bm90IGEgY2VydGlmaWNhdGU='] }, /x5c\[0\]/],
  ])('a header that is not a registration certificate: %j', async (header, message) => {
    await expect(load(registrar.certificate(registrationClaims('LEIXG-RP1', BOTH), header))).rejects.toThrow(message);
  });

  it('a file that is not a JWT (a CWT, or a PEM), or missing', async () => {
    await expect(load('-----BEGIN CERTIFICATE-----')).rejects.toThrow(/not a JWT \(a compact JWS\)/);
    await expect(load('')).rejects.toThrow(/not a JWT/);
    const clients = [{ clientId: 'rp-1', scopes: [], registration: { subject: 'x', certificates: ['missing.jwt'] } }];
    await expect(
      loadRegistrations(clients, { registrars: ['registrar.pem'], baseDir: dir, queryOf, asked }),
    ).rejects.toThrow(/clients\[0\] \(rp-1\) registration\.certificates\[0\] \(.*missing\.jwt\): not found/);
  });

  it('a malformed credentials claim', async () => {
    const jwt = registrar.certificate(registrationClaims('LEIXG-RP1', [{ format: 'dc+sd-jwt', meta: {} }]));
    await expect(load(jwt)).rejects.toThrow(/credentials\[0\]\.meta\.vct_values/);
  });

  it('no registrar configured, or a registrar file missing', async () => {
    const jwt = registrar.certificate(registrationClaims('LEIXG-RP1', BOTH));
    await expect(load(jwt, ['Badge'], { registrars: [] })).rejects.toThrow(/verifier\.registrars: .*no registrar/);
    await expect(load(jwt, ['Badge'], { registrars: ['nope.pem'] })).rejects.toThrow(
      /verifier\.registrars\[0\] \(.*nope\.pem\): not found/,
    );
  });
});

describe('ARF RPRC_21 at start-up: a client whose verification scopes ask for more than it registered', () => {
  it('is refused, naming the client, the scope and the attributes', async () => {
    const jwt = registrar.certificate(registrationClaims('LEIXG-RP1', [sdJwtRegistered(BADGE_VCT, ['FirstName'])]));
    await expect(load(jwt, ['Badge'])).rejects.toThrow(
      `clients[1] (rp-1): scope Badge asks for more than its registration certificate registers: dc+sd-jwt ${BADGE_VCT}: Email not registered`,
    );
    await expect(load(jwt, ['Card'])).rejects.toThrow(
      /scope Card .*dc\+sd-jwt .*card is not registered \(asked: MemberName\)/,
    );
  });

  it('with certificates per intended use, each scope within one of them passes; a request for both is refused', async () => {
    const badge = registrar.certificate(registrationClaims('LEIXG-RP1', [BOTH[0]]));
    const card = registrar.certificate(registrationClaims('LEIXG-RP1', [BOTH[1]]));
    writeFileSync(join(dir, 'badge.jwt'), badge);
    writeFileSync(join(dir, 'card.jwt'), card);
    const registrations = await loadRegistrations(
      [
        {
          clientId: 'rp-1',
          scopes: ['Badge', 'Card'],
          registration: { subject: 'LEIXG-RP1', certificates: ['badge.jwt', 'card.jwt'] },
        },
      ],
      { registrars: ['registrar.pem'], baseDir: dir, queryOf, asked },
    );
    expect(registrations.verifierInfo('rp-1', queryOf({ credentialTypes: ['Card'] }))?.[0].data).toBe(card);
    expect(registrations.verifierInfo('rp-1', queryOf({ credentialTypes: ['Badge'] }))?.[0].data).toBe(badge);
    expect(() => registrations.checkRequest('rp-1', { credentialTypes: ['Badge'] })).not.toThrow();
    expect(() => registrations.checkRequest('rp-1', { credentialTypes: ['Badge', 'Card'] })).toThrow(
      /scope: asks for more than the relying party's registration certificates \(any one of them\) registers: dc\+sd-jwt .*card is not registered \(asked: MemberName\)/,
    );
    expect(registrations.verifierInfo('rp-1', queryOf({ credentialTypes: ['Badge', 'Card'] }))).toBeUndefined();
  });

  it('a registration that expires while the service runs: requests under it are refused, naming the expiry', async () => {
    const jwt = registrar.certificate(registrationClaims('LEIXG-RP1', BOTH));
    const registrations = await load(jwt);
    const later = Date.now() / 1000 + 7200;
    expect(registrations.choose('rp-1', queryOf({ credentialTypes: ['Badge'] }), later)).toHaveProperty('expired');
  });
});

describe('the person-identification request (VerifiedIdentity, D12) is held to the registration too', () => {
  it('a PID query beyond the registration is refused at start-up, naming the claims', async () => {
    const pid = pidRequestKind({
      vct: ['urn:eudi:pid:1'],
      claims: ['given_name', 'family_name'],
      optionalClaims: ['birthdate'],
      trustedIssuers: [{ issuer: 'https://pid.example' }],
    } as never);
    const identityQuery = (a: AskedFor) => ('identity' in a ? pid.query : queryOf(a));
    const jwt = registrar.certificate(
      registrationClaims('LEIXG-RP1', [sdJwtRegistered('urn:eudi:pid:1', ['given_name'])]),
    );
    writeFileSync(join(dir, 'pid.jwt'), jwt);
    const load = () =>
      loadRegistrations(
        [
          {
            clientId: 'rp-1',
            scopes: ['VerifiedIdentity'],
            registration: { subject: 'LEIXG-RP1', certificates: ['pid.jwt'] },
          },
        ],
        {
          registrars: ['registrar.pem'],
          baseDir: dir,
          queryOf: identityQuery,
          asked: (s) => (s === 'VerifiedIdentity' ? { identity: 'VerifiedIdentity' } : undefined),
        },
      );
    await expect(load()).rejects.toThrow(
      'clients[0] (rp-1): scope VerifiedIdentity asks for more than its registration certificate registers: dc+sd-jwt urn:eudi:pid:1: family_name, birthdate not registered',
    );
  });
});

describe('configuration (clients[].registration, verifier.registrars)', () => {
  const doc = (client: Record<string, unknown>, verifier: Record<string, unknown> = {}) => {
    const d = minimalDoc();
    Object.assign(d.clients[0], client);
    d.verifier = verifier;
    return d;
  };

  it('a registration needs a registrar to vouch for it', async () => {
    const problems = await problemsOf(() =>
      validateConfig(doc({ registration: { subject: 'LEIXG-HR', certificates: ['hr.jwt'] } })),
    );
    expect(problems).toEqual([
      "verifier.registrars: is required: clients[0] (hr-portal) has a registration certificate, which a registrar's anchor must vouch for",
    ]);
  });

  it.each([
    [
      { subject: '', certificates: ['hr.jwt'] },
      /clients\[0\] \(clientId hr-portal\)\.registration\.subject: Too small/,
    ],
    [
      { subject: 'LEIXG-HR', certificates: [] },
      /clients\[0\] \(clientId hr-portal\)\.registration\.certificates: Too small/,
    ],
    [
      { subject: 'LEIXG-HR', certificates: ['hr.jwt'], extra: 1 },
      /clients\[0\] \(clientId hr-portal\)\.registration: Unrecognized key: "extra"/,
    ],
  ])('a malformed registration is named: %j', async (registration, path) => {
    const problems = await problemsOf(() => validateConfig(doc({ registration }, { registrars: ['r.pem'] })));
    expect(problems.join('\n')).toMatch(path);
  });

  it('a client with a registration and the registrars loads', () => {
    const config = validateConfig(
      doc({ registration: { subject: 'LEIXG-HR', certificates: ['hr.jwt'] } }, { registrars: ['r.pem'] }),
    );
    expect(config.clients[0].registration).toEqual({ subject: 'LEIXG-HR', certificates: ['hr.jwt'] });
    expect(config.verifier.registrars).toEqual(['r.pem']);
  });
});
