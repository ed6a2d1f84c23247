import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createRedisStore, type RedisStore } from '../../src/store/redis.js';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair, postForm, Browser } from '../helpers/rp.js';
import { holderCompletesVerification, newWallet, pushAuthorization, redeemCode } from '../helpers/flows.js';
import { REDIS_URL } from '../helpers/stores.js';

/**
 * What a completed issuance or verification flow leaves in Redis, key family by key family, right after
 * the relying party's token response. Records of the finished flow are gone, or live no longer than the
 * single-use artefact they guard; 60 s later at most 3 KB of it is left beyond its status list entry,
 * its replay markers and the rate limits' counters. Redis only: it reads the keys' TTLs and sizes.
 */
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const CLIENT = { id: 'issuer-pkce', secret: SECRETS.pkceIssuer };
const PIN = '4321';

/**
 * Each family a completed flow may leave (ids replaced by `*`), with the longest TTL it may have left.
 * A family not listed here fails the test: a new record must say how long it outlives its flow.
 */
const RELYING_PARTY_SIDE: [RegExp, number][] = [
  [/^rl:/, 3600],
  // the code and what its redemption needs, for the code's lifetime
  [/^oidc:v2:AuthorizationCode:\{\*\}(:consumed)?$/, 60],
  [/^oidc:v2:grant:\{\*\}:AuthorizationCode$/, 60],
  [/^oidc:v2:(Session:\{\*\}|uid:\*)$/, 60],
  // the pushed request and its single-use marks: until the request_uri expires
  [/^oidc:v2:PushedAuthorizationRequest:\{\*\}(:consumed|:claimed:issuer-pkce)?$/, 60],
  // the prompt's step, handed over to the grant: a second poll may still read it
  [/^step:\{\*\}(:claims)?$/, 30],
  // what a call that changes something once did, for a second try of that call (src/store/redisScripts.ts)
  [/:rcpt:\*$/, 30],
];
const ALLOWED: [RegExp, number][] = [
  ...RELYING_PARTY_SIDE,
  // must outlive the flow: the hint's replay marker (until the hint's exp), the credential's status entry
  [/^hint:\{\*\}$/, 600],
  [/^status:wallet:/, 400 * 86_400],
  // the wallet's side: its access token (the notification endpoint takes it), and what guards its use
  [/^oidc:wallet:(AccessToken|PreAuthorizedCode):\{\*\}(:consumed)?$/, 300],
  [/^oidc:wallet:grant:\{\*\}:(AccessToken|PreAuthorizedCode)$/, 300],
  [/^oidc:wallet:Grant:\{\*\}$/, 305],
  [/^wallet:\{\*\}(:event)?$/, 300],
  [/^wallet:\{\*\}:outcome$/, 120],
  [/^wallet:\{\*\}:redemption$/, 5],
];
/** A verification flow: the presentation request's status and result, read by the page's polls, as long as its step. */
const ALLOWED_VERIFICATION: [RegExp, number][] = [...RELYING_PARTY_SIDE, [/^vp:\{\*\}:(status|result)$/, 30]];

/** What must outlive the flow, left out of its 3 KB. */
const OUTLIVING = /^status:|^rl:|^hint:|:consumed$|:claimed:/;

const familyOf = (key: string) =>
  key
    .replace(/\{[^}]*\}/g, '{*}')
    .split(':')
    .map((part) => (/^[A-Za-z0-9_-]{16,}$/.test(part) && !/^(?:[A-Z][a-z]+)+$/.test(part) ? '*' : part))
    .join(':');

run('a completed issuance flow on Redis (issue 37)', () => {
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  let store: RedisStore;
  let admin: Redis;
  let svc: TestService;
  beforeAll(async () => {
    store = await createRedisStore({ url: REDIS_URL, keyPrefix: prefix });
    admin = new Redis(REDIS_URL);
    svc = await startTestService({ store: { url: REDIS_URL, keyPrefix: prefix } }, { store });
  });
  afterAll(async () => {
    await svc?.stop();
    admin?.disconnect();
  });

  it('leaves its records gone or short-lived, family by family, and at most 3 KB of its own 60 s later', async () => {
    const { verifier, browser, prompt, offer } = await startIssuance(svc.url);
    await (await newWallet()).receive(offer, { pin: PIN });
    const status = (await (await browser.get(`${prompt.final}/status`)).json()) as { next: string };
    const done = await browser.follow(status.next);
    const token = await postForm(`${svc.url}/v2.0/oidc/token`, {
      grant_type: 'authorization_code',
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      code: new URL(done.final).searchParams.get('code') ?? '',
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    expect(token.status).toBe(200);

    const { found, laterOwnBytes } = await leftBehind(admin, prefix, ALLOWED);
    // gone with the flow's end
    for (const gone of ['oidc:v2:Interaction:{*}', 'oidc:v2:Grant:{*}', 'flow:{*}:claims', 'wallet:{*}:offer'])
      expect(found.has(gone), `${gone} is left`).toBe(false);
    for (const gone of ['wallet:{*}:code', 'wallet:{*}:status']) expect(found.has(gone), `${gone} is left`).toBe(false);
    expect(laterOwnBytes).toBeLessThanOrEqual(3 * 1024);
  });

  it('a verification flow leaves no request, link, key id or device behind, and its status only as long as its step', async () => {
    const wallet = await newWallet();
    await wallet.receive((await startIssuance(svc.url)).offer, { pin: PIN });
    const before = new Set(await admin.keys(`${prefix}*`));
    const { verifier, challenge } = pkcePair();
    const { authorizeUrl } = await pushAuthorization(svc.url, {
      scope: 'openid EmployeeBadge',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const { callbackUrl } = await holderCompletesVerification(authorizeUrl, { redirectUri: REDIRECT, wallet });
    await redeemCode(svc.url, { code: new URL(callbackUrl).searchParams.get('code') ?? '', verifier });
    const { found, laterOwnBytes } = await leftBehind(admin, prefix, ALLOWED_VERIFICATION, before);
    for (const gone of ['vp:{*}:request', 'vp:{*}:device', 'vp:kid:*', 'vp:request-object:*', 'vp:state:*'])
      expect(found.has(gone), `${gone} is left`).toBe(false);
    expect(found.has('vp:{*}:status'), 'the status a second poll reads').toBe(true);
    expect(laterOwnBytes).toBe(0);
  });
});

/** An issuance flow of the relying party up to the holder's prompt: what the browser, the wallet and the token request need. */
async function startIssuance(base: string) {
  const { verifier, challenge } = pkcePair();
  const hint = await makeHint({
    clientId: CLIENT.id,
    secret: CLIENT.secret,
    audience: base,
    claims: { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com', PinCode: PIN },
  });
  const { authorizeUrl } = await pushAuthorization(base, {
    scope: 'openid issue.EmployeeBadge',
    state: 's',
    nonce: 'n',
    id_token_hint: hint,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl);
  const offer = /href="(openid-credential-offer[^"]+)"/.exec(prompt.html ?? '')![1].replaceAll('&amp;', '&');
  return { verifier, browser, prompt, offer };
}

/**
 * The key families under `prefix` (those not in `before`), each with the longest TTL left, checked against
 * `allowed`; and the bytes of the flow's own keys that live more than 60 s more.
 */
async function leftBehind(
  admin: Redis,
  prefix: string,
  allowed: [RegExp, number][],
  before: ReadonlySet<string> = new Set(),
): Promise<{ found: Map<string, number>; laterOwnBytes: number }> {
  await new Promise((resolve) => setTimeout(resolve, 100)); // what the flow's last requests remove unawaited
  const found = new Map<string, number>();
  let laterOwnBytes = 0;
  for (const key of await admin.keys(`${prefix}*`)) {
    if (before.has(key)) continue;
    const family = familyOf(key.slice(prefix.length));
    const ttl = await admin.ttl(key);
    if (ttl === -2) continue; // expired meanwhile (a rate limit's window)
    found.set(family, Math.max(found.get(family) ?? -2, ttl));
    if ((ttl > 60 || ttl === -1) && !OUTLIVING.test(family))
      laterOwnBytes += Number(await admin.memory('USAGE', key, 'SAMPLES', 0));
  }
  for (const [family, ttl] of found) {
    const rule = allowed.find(([pattern]) => pattern.test(family));
    expect(rule, `${family} is not a family a completed flow may leave`).toBeDefined();
    expect(ttl, `${family}: a key without TTL`).not.toBe(-1);
    expect(ttl, `${family}: TTL left`).toBeLessThanOrEqual(rule![1]);
  }
  return { found, laterOwnBytes };
}
