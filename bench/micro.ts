/**
 * `npx tsx bench/micro.ts`: prices the hot spots the first profiles pointed at (the first rounds' findings,
 * in the git history of bench/README.md), the code before each change next to the code after, in CPU µs
 * per operation on this machine (one process, sequential, bounded in count and time; BENCH_QUICK=1:
 * shorter). Nothing here is used by the service.
 */
import { createHmac, createSecretKey, randomBytes, timingSafeEqual, webcrypto } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { jwtVerify, SignJWT } from 'jose';
import QRCode from 'qrcode';
import encodeQR from 'qr';
import { credentialOffer, credentialOfferUri } from '../src/issuance/offerUri.js';
import { qrSvg } from '../src/interaction/views/qrSvg.js';

const QUICK = process.env.BENCH_QUICK === '1';
const BUDGET_MS = QUICK ? 150 : 1_000;

async function price(name: string, fn: () => unknown, maxCount = 100_000): Promise<number> {
  for (let i = 0; i < 20; i++) await fn();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (n < maxCount && performance.now() - t0 < BUDGET_MS) {
    await fn();
    n++;
  }
  const c = process.cpuUsage(c0);
  const us = (c.user + c.system) / n;
  console.log(`  ${us.toFixed(1).padStart(9)} µs CPU  ${name}  (${n} runs)`);
  return us;
}

// 1. The prompt's QR code (src/interaction/views/qrSvg.ts)
console.log('QR code of the wallet link (the prompt page):');
const byValue = credentialOfferUri(
  credentialOffer({
    credentialIssuer: 'https://vc.example.com/wallet',
    credentialConfigurationId: 'EmployeeBadge',
    preAuthorizedCode: randomBytes(32).toString('base64url'),
    pinLength: 4,
  }),
);
const byReference = `openid-credential-offer://?credential_offer_uri=${encodeURIComponent(`https://vc.example.com/wallet/offer/${randomBytes(32).toString('base64url')}`)}`;
console.log(`  offer by value: ${byValue.length} characters; by reference: ${byReference.length}`);
await price(
  'the first version: toString(offer by value, svg, M)',
  () => QRCode.toString(byValue, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }),
  2_000,
);
await price(
  'byte segment (no dijkstra segmentation)',
  () =>
    QRCode.toString([{ data: Buffer.from(byValue), mode: 'byte' }], {
      type: 'svg',
      margin: 1,
      errorCorrectionLevel: 'M',
    }),
  2_000,
);
await price(
  'byte segment + fixed maskPattern (no 8-mask search)',
  () =>
    QRCode.toString([{ data: Buffer.from(byValue), mode: 'byte' }], {
      type: 'svg',
      margin: 1,
      errorCorrectionLevel: 'M',
      maskPattern: 0,
    } as never),
  5_000,
);
await price(
  'offer by reference (credential_offer_uri)',
  () => QRCode.toString(byReference, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' }),
  5_000,
);
await price(
  'offer by reference + byte segment + fixed mask (toString: qrcode writes the SVG)',
  () =>
    QRCode.toString([{ data: Buffer.from(byReference), mode: 'byte' }], {
      type: 'svg',
      margin: 1,
      errorCorrectionLevel: 'M',
      maskPattern: 0,
    } as never),
  10_000,
);
await price(
  '  of which the encoding alone (QRCode.create)',
  () =>
    QRCode.create([{ data: Buffer.from(byReference), mode: 'byte' }], { errorCorrectionLevel: 'M', maskPattern: 0 }),
  10_000,
);
await price(
  '  the same code from the qr package (encodeQR raw, byte mode, M, mask 0)',
  () => encodeQR(byReference, 'raw', { ecc: 'medium', encoding: 'byte', mask: 0, border: 1 }),
  10_000,
);
await price(
  "today: qr's encoding, the path written as bytes (src/interaction/views/qrSvg.ts)",
  () => qrSvg(byReference),
  10_000,
);

// 2. The id_token_hint's HS256 check (src/rules/idTokenHint.ts verifyIdTokenHint)
console.log('HS256 id_token_hint verification (src/rules/idTokenHint.ts):');
const secret = 'bench-secret-0123456789abcdef';
const hint = await new SignJWT({ FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com', PinCode: '4321' })
  .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
  .setIssuer('rp')
  .setAudience('https://vc.example.com')
  .setExpirationTime('10m')
  .setJti('j')
  .sign(new TextEncoder().encode(secret));
const opts = {
  issuer: 'rp',
  audience: 'https://vc.example.com',
  requiredClaims: ['iss', 'aud', 'exp'],
  algorithms: ['HS256'],
};
await price(
  'today: jwtVerify(hint, new TextEncoder().encode(secret))',
  () => jwtVerify(hint, new TextEncoder().encode(secret), opts),
  20_000,
);
const cryptoKey = await webcrypto.subtle.importKey(
  'raw',
  new TextEncoder().encode(secret),
  { name: 'HMAC', hash: 'SHA-256' },
  false,
  ['verify'],
);
await price(
  'jwtVerify with a cached CryptoKey per client and alg',
  () => jwtVerify(hint, cryptoKey as never, opts),
  20_000,
);
const keyObject = createSecretKey(Buffer.from(secret));
await price(
  'jwtVerify with a KeyObject (jose still imports it per call)',
  () => jwtVerify(hint, keyObject, opts),
  20_000,
);
const [h, p, s] = hint.split('.');
await price(
  'node:crypto createHmac + timingSafeEqual (signature only; claims checked apart)',
  () => {
    const mac = createHmac('sha256', secret).update(`${h}.${p}`).digest();
    const given = Buffer.from(s, 'base64url');
    return given.length === mac.length && timingSafeEqual(mac, given);
  },
  100_000,
);

// 3. The memory store's copies (src/store/memory.ts #put/get: structuredClone both ways)
console.log('memory store copies (src/store/memory.ts), an AuthorizationCode-sized payload:');
const payload = {
  iat: 1_700_000_000,
  exp: 1_700_000_600,
  accountId: 'holder',
  acr: 'urn:mace:incommon:iap:bronze',
  authTime: 1_700_000_000,
  claims: {},
  codeChallenge: randomBytes(32).toString('base64url'),
  codeChallengeMethod: 'S256',
  grantId: randomBytes(16).toString('base64url'),
  nonce: 'bench-nonce',
  redirectUri: 'https://rp.example/cb',
  resource: undefined,
  scope: 'openid issue.EmployeeBadge',
  sessionUid: randomBytes(16).toString('base64url'),
  expiresWithSession: true,
  clientId: 'bench-rp',
  kind: 'AuthorizationCode',
  jti: randomBytes(32).toString('base64url'),
};
await price('today: structuredClone on put and on get', () => structuredClone(structuredClone(payload)), 100_000);
const asJson = JSON.stringify(payload);
await price(
  'JSON.stringify on put, JSON.parse on get (what Redis does)',
  () => JSON.parse(JSON.stringify(payload)),
  100_000,
);
await price('JSON.parse on get only (string kept)', () => JSON.parse(asJson), 100_000);

// 4. Handing the form to oidc-provider (src/http/formBody.ts replayBody + src/oidc/http.ts forwardForm)
console.log('forwarding the checked form to oidc-provider (src/oidc/http.ts forwardForm -> replayBody):');
const params = {
  grant_type: 'authorization_code',
  code: randomBytes(32).toString('base64url'),
  redirect_uri: 'https://rp.example/cb',
  client_id: 'bench-rp',
  client_secret: secret,
  code_verifier: randomBytes(32).toString('base64url'),
};
await price(
  'today: URLSearchParams -> Buffer -> Readable.from -> read back in chunks',
  async () => {
    const body = Buffer.from(new URLSearchParams(params).toString());
    const r = Readable.from([body], { objectMode: false });
    const chunks: Buffer[] = [];
    for await (const c of r.iterator({ destroyOnReturn: false })) chunks.push(c as Buffer);
    return Buffer.concat(chunks);
  },
  50_000,
);
await price(
  'URLSearchParams -> Buffer set as req.body (oidc-provider reads it when the stream is consumed)',
  () => Buffer.from(new URLSearchParams(params).toString()),
  100_000,
);

// 5. A signed cookie's verification (every request that reads the interaction, resume or session cookie)
console.log("A signed cookie's verification (Cookies.get with signed: true → keys.index):");
const { default: Keygrip } = (await import('keygrip')) as unknown as {
  default: new (keys: string[]) => { sign(d: string): string; index(d: string, s: string): number };
};
const { CookieKeys } = await import('../src/http/cookieKeys.js');
const cookieSecrets = [randomBytes(32).toString('base64url')];
const cookieData = `_interaction_v2=${randomBytes(16).toString('base64url')}`;
const keygrip = new Keygrip(cookieSecrets);
const cookieKeys = new CookieKeys(cookieSecrets);
const cookieSig = keygrip.sign(cookieData);
await price(
  "before: Keygrip's index (HMAC-SHA1 from a string secret, then tsscmp: 32 random bytes and two HMAC-SHA256)",
  () => keygrip.index(cookieData, cookieSig),
  100_000,
);
await price(
  'today: CookieKeys.index (KeyObject secret, one HMAC-SHA1, timingSafeEqual; src/http/cookieKeys.ts)',
  () => cookieKeys.index(cookieData, cookieSig),
  100_000,
);
await price("before: Keygrip's sign", () => keygrip.sign(cookieData), 100_000);
await price('today: CookieKeys.sign', () => cookieKeys.sign(cookieData), 100_000);
