/**
 * Issuance rules checked through full flows (PAR, the holder's browser and a dev wallet, the code
 * exchange): what the id_token_hint carries ends up unchanged in the ID token claims and in the issued
 * credential (spec: Issued ID token "claims match the attributes of the issued credential"; D8 templates,
 * D9 images), optional attributes left out stay out, numbers stay numbers; a hint backs one credential
 * only (D7 replay); `nbf` is honoured with the 30 s clock tolerance (spec: id_token_hint nbf; D7).
 *
 * Version 2 flows use `issuer-pkce` (PKCE S256); Version 1 flows (no PKCE at PAR, no `openid` in the
 * issuance scope) use `issuer-plain` for MembershipCard and `other` for EmployeeBadge.
 */
import { deflateSync } from 'node:zlib';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteJWKSet, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair, postForm } from '../helpers/rp.js';
import { expectError } from '../helpers/assertions.js';
import { holderCompletesIssuance, newWallet } from '../helpers/flows.js';
import { verifySdJwtVcIndependently } from '../helpers/sdjwt.js';
import { versionsAt, type VersionAt } from '../helpers/versions.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

// ---------------------------------------------------------------------------------------------------
// A tiny valid PNG, built here: signature, IHDR, IDAT (zlib deflate of the filtered scanlines), IEND,
// each chunk with its CRC-32 (PNG annex D).

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(data: Buffer): number {
  let c = 0xffffffff;
  for (const byte of data) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const typeAndData = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typeAndData));
  return Buffer.concat([length, typeAndData, crc]);
}

/** A width x height RGB, 8-bit PNG filled with one colour. */
function tinyPng(width = 2, height = 2, rgb: [number, number, number] = [200, 30, 90]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type: truecolour
  ihdr[10] = 0; // compression
  ihdr[11] = 0; // filter method
  ihdr[12] = 0; // no interlace
  const scanline = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => rgb).flat())]);
  const raw = Buffer.concat(Array.from({ length: height }, () => scanline));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const PHOTO = `data:image/png;base64,${tinyPng().toString('base64')}`;

// ---------------------------------------------------------------------------------------------------
// Flows

interface VersionCase extends VersionAt {
  scope: (type: string) => string;
  /** the client for a credential type in this version */
  client: (type: 'MembershipCard' | 'EmployeeBadge') => string;
  pkce: boolean;
}

const at = versionsAt(() => svc.url);
const V2: VersionCase = { ...at.V2, scope: at.V2.issue, client: () => 'issuer-pkce', pkce: true };
const V1: VersionCase = {
  ...at.V1,
  scope: at.V1.issue,
  client: (type) => (type === 'MembershipCard' ? 'issuer-plain' : 'other'),
  pkce: false,
};
const VERSIONS = [V2, V1];

const CLIENT_SECRETS: Record<string, string> = {
  'issuer-pkce': SECRETS.pkceIssuer,
  'issuer-plain': SECRETS.plainIssuer,
  other: SECRETS.other,
};

type Res = { status: number; body: any; headers: Headers };

/** PAR for an issuance of `type` with the given hint (made from `claims` unless given). */
async function pushIssuance(
  vc: VersionCase,
  type: 'MembershipCard' | 'EmployeeBadge',
  opts: { claims?: Record<string, unknown>; hint?: string } = {},
) {
  const clientId = vc.client(type);
  const secret = CLIENT_SECRETS[clientId];
  const hint = opts.hint ?? (await makeHint({ clientId, secret, audience: vc.issuer(), claims: opts.claims ?? {} }));
  const { verifier, challenge } = pkcePair();
  const nonce = randomBytes(8).toString('hex');
  const state = randomBytes(8).toString('hex');
  const res: Res = await postForm(`${svc.url}${vc.prefix}/par`, {
    client_id: clientId,
    client_secret: secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: vc.scope(type),
    nonce,
    state,
    id_token_hint: hint,
    code_challenge: vc.pkce ? challenge : undefined,
    code_challenge_method: vc.pkce ? 'S256' : undefined,
  });
  expect(res.status, `never a 500: ${JSON.stringify(res.body)}`).toBeLessThan(500);
  return { res, clientId, secret, hint, verifier: vc.pkce ? verifier : undefined, nonce, state };
}

/**
 * The whole journey: PAR, the holder's browser and a new dev wallet (with the PIN if any), the code
 * exchange; returns the verified ID token claims and the credential as an outside verifier sees it.
 */
async function issue(
  vc: VersionCase,
  type: 'MembershipCard' | 'EmployeeBadge',
  opts: { claims?: Record<string, unknown>; hint?: string; pin?: string } = {},
) {
  const pushed = await pushIssuance(vc, type, opts);
  expect(pushed.res.status, JSON.stringify(pushed.res.body)).toBe(201);
  const wallet = await newWallet();
  const authorizeUrl = `${svc.url}${vc.prefix}/authorize?${new URLSearchParams({ client_id: pushed.clientId, request_uri: pushed.res.body.request_uri })}`;
  const { callbackUrl } = await holderCompletesIssuance(authorizeUrl, { redirectUri: REDIRECT, wallet, pin: opts.pin });
  const callback = new URL(callbackUrl);
  expect(callback.searchParams.get('error'), callbackUrl).toBeNull();
  expect(callback.searchParams.get('state')).toBe(pushed.state);

  const token: Res = await postForm(`${svc.url}${vc.prefix}/token`, {
    grant_type: 'authorization_code',
    client_id: pushed.clientId,
    client_secret: pushed.secret,
    code: callback.searchParams.get('code') ?? undefined,
    redirect_uri: REDIRECT,
    code_verifier: pushed.verifier,
  });
  expect(token.status, JSON.stringify(token.body)).toBe(200);
  const discovery = await (await fetch(`${svc.url}${vc.discovery}`)).json();
  const { payload: idToken } = await jwtVerify(token.body.id_token, createRemoteJWKSet(new URL(discovery.jwks_uri)), {
    issuer: vc.issuer(),
    audience: pushed.clientId,
  });
  expect(idToken.nonce).toBe(pushed.nonce);

  const stored = wallet.list();
  expect(stored).toHaveLength(1);
  const issuerMeta = await (await fetch(`${svc.url}/.well-known/jwt-vc-issuer/wallet`)).json();
  const credential = await verifySdJwtVcIndependently(stored[0].credential, issuerMeta.jwks);
  return { idToken, credential, hint: pushed.hint };
}

/** The registered JWT claims and the service's own claims, left out to compare attributes only. */
const NOT_ATTRIBUTES = new Set([
  'iss',
  'aud',
  'exp',
  'nbf',
  'iat',
  'jti',
  'sub',
  'nonce',
  'SerialNumber',
  'ExpiresAt',
  'vct',
  'vct#integrity',
  'cnf',
  'status',
  'sid',
  'auth_time',
]);
const attributesOf = (claims: JWTPayload | Record<string, unknown>) =>
  Object.fromEntries(Object.entries(claims).filter(([k]) => !NOT_ATTRIBUTES.has(k)));

/** An HS256 hint with exactly the given claims (for nbf). */
function rawHint(secret: string, payload: Record<string, unknown>): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

describe('the test PNG', () => {
  it("is a valid PNG by the service's own check (sanity check of the fixture)", async () => {
    const { pngProblem } = await import('../../src/rules/images.js');
    expect(pngProblem(tinyPng())).toBeUndefined();
  });
});

describe.each(VERSIONS)('attributes through a full issuance $tag', (vc) => {
  it(`D9: an image attribute (MembershipCard Photo, PNG data: URI) is in the ID token claims and the credential unchanged ${vc.tag}`, async () => {
    const attributes = { MemberName: 'Ada Lovelace', MemberNumber: 1815, Photo: PHOTO };
    const { idToken, credential } = await issue(vc, 'MembershipCard', { claims: attributes });
    expect(idToken.Photo).toBe(PHOTO);
    expect(credential.claims.Photo).toBe(PHOTO);
    // the claims match the attributes of the issued credential, nothing more, nothing less
    expect(attributesOf(idToken)).toEqual(attributes);
    expect(attributesOf(credential.claims)).toEqual(attributes);
    expect(credential.disclosures).toBe(3);
    // the credential and the ID token describe the same credential
    expect(idToken.sub).toBe(idToken.SerialNumber);
    expect(credential.payload.exp).toBe(Math.floor(Date.parse(String(idToken.ExpiresAt)) / 1000));
  });

  it(`D8: an optional attribute left out (MembershipCard Photo) is absent from the ID token and the credential ${vc.tag}`, async () => {
    const attributes = { MemberName: 'Grace Hopper', MemberNumber: 1906 };
    const { idToken, credential } = await issue(vc, 'MembershipCard', { claims: attributes });
    expect(idToken).not.toHaveProperty('Photo');
    expect(credential.claims).not.toHaveProperty('Photo');
    expect(attributesOf(idToken)).toEqual(attributes);
    expect(attributesOf(credential.claims)).toEqual(attributes);
    expect(credential.disclosures).toBe(2);
  });

  it(`D8: an optional attribute left out (EmployeeBadge Email), with the PIN, is absent from the ID token and the credential ${vc.tag}`, async () => {
    const attributes = { FirstName: 'Katherine', LastName: 'Johnson' };
    const { idToken, credential } = await issue(vc, 'EmployeeBadge', {
      claims: { ...attributes, PinCode: '2718' },
      pin: '2718',
    });
    expect(idToken).not.toHaveProperty('Email');
    expect(credential.claims).not.toHaveProperty('Email');
    expect(idToken).not.toHaveProperty('PinCode');
    expect(credential.claims).not.toHaveProperty('PinCode');
    expect(attributesOf(idToken)).toEqual(attributes);
    expect(attributesOf(credential.claims)).toEqual(attributes);
  });

  it(`D8: a number attribute stays a JSON number in the ID token and the credential ${vc.tag}`, async () => {
    const { idToken, credential } = await issue(vc, 'MembershipCard', {
      claims: { MemberName: 'Alan Turing', MemberNumber: 1912 },
    });
    expect(idToken.MemberNumber).toBe(1912);
    expect(typeof idToken.MemberNumber).toBe('number');
    expect(credential.claims.MemberNumber).toBe(1912);
    expect(typeof credential.claims.MemberNumber).toBe('number');
  });

  it(`D8: the number 0 and a fractional number stay numbers (no falsy or integer shortcut) ${vc.tag}`, async () => {
    const zero = await issue(vc, 'MembershipCard', { claims: { MemberName: 'Zero', MemberNumber: 0 } });
    expect(zero.idToken.MemberNumber).toBe(0);
    expect(zero.credential.claims.MemberNumber).toBe(0);
    const fraction = await issue(vc, 'MembershipCard', { claims: { MemberName: 'Half', MemberNumber: 12.5 } });
    expect(fraction.idToken.MemberNumber).toBe(12.5);
    expect(fraction.credential.claims.MemberNumber).toBe(12.5);
  });

  it(`string attributes with non-ASCII text reach the ID token and the credential unchanged ${vc.tag}`, async () => {
    const attributes = { MemberName: 'Zoë Ångström-Łukasiewicz 李小龍 👩‍🔬', MemberNumber: 7 };
    const { idToken, credential } = await issue(vc, 'MembershipCard', { claims: attributes });
    expect(idToken.MemberName).toBe(attributes.MemberName);
    expect(credential.claims.MemberName).toBe(attributes.MemberName);
  });
});

describe.each(VERSIONS)('D7: a hint backs one credential only $tag', (vc) => {
  it(`D7: the same hint in a second PAR after the first flow completed -> 400 invalid_request naming id_token_hint ${vc.tag}`, async () => {
    const clientId = vc.client('MembershipCard');
    const hint = await makeHint({
      clientId,
      secret: CLIENT_SECRETS[clientId],
      audience: vc.issuer(),
      claims: { MemberName: 'Ada', MemberNumber: 1 },
    });
    const first = await issue(vc, 'MembershipCard', { hint });
    expect(first.idToken.MemberName).toBe('Ada');
    const again = await pushIssuance(vc, 'MembershipCard', { hint });
    expectError(again.res, 'invalid_request', 'id_token_hint');
  });

  it(`D7: the same hint in a second PAR while the first flow is pending -> 400 invalid_request ${vc.tag}`, async () => {
    const clientId = vc.client('MembershipCard');
    const hint = await makeHint({
      clientId,
      secret: CLIENT_SECRETS[clientId],
      audience: vc.issuer(),
      claims: { MemberName: 'Ada', MemberNumber: 2 },
    });
    const first = await pushIssuance(vc, 'MembershipCard', { hint });
    expect(first.res.status, JSON.stringify(first.res.body)).toBe(201);
    expectError((await pushIssuance(vc, 'MembershipCard', { hint })).res, 'invalid_request', 'id_token_hint');
  });
});

describe.each(VERSIONS)('id_token_hint nbf and the 30 s clock tolerance (D7) $tag', (vc) => {
  const clientId = () => vc.client('MembershipCard');
  const hintWithNbf = (nbfOffset: number) => {
    const now = Math.floor(Date.now() / 1000);
    return rawHint(CLIENT_SECRETS[clientId()], {
      MemberName: 'Early Bird',
      MemberNumber: 5,
      iss: clientId(),
      aud: vc.issuer(),
      iat: now,
      nbf: now + nbfOffset,
      exp: now + 600,
      jti: randomBytes(12).toString('base64url'),
    });
  };

  it(`spec: nbf 20 s in the future (within the 30 s tolerance) is accepted and the flow issues the credential ${vc.tag}`, async () => {
    const { idToken, credential } = await issue(vc, 'MembershipCard', { hint: await hintWithNbf(20) });
    expect(idToken.MemberName).toBe('Early Bird');
    expect(credential.claims.MemberNumber).toBe(5);
  });

  it(`spec: nbf 90 s in the future (beyond the tolerance) -> 400 invalid_request naming nbf ${vc.tag}`, async () => {
    const { res } = await pushIssuance(vc, 'MembershipCard', { hint: await hintWithNbf(90) });
    expectError(res, 'invalid_request', /id_token_hint.*nbf|nbf.*id_token_hint/);
  });

  it(`spec: nbf 45 s in the future (just beyond the tolerance) -> 400 invalid_request ${vc.tag}`, async () => {
    const { res } = await pushIssuance(vc, 'MembershipCard', { hint: await hintWithNbf(45) });
    expectError(res, 'invalid_request', 'nbf');
  });
});
