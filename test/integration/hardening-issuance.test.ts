/**
 * Hardening (issue: "close what a hostile review found"): each attack on the issuance path as a reviewer
 * performed it, through the running service, on the store of the run (flows-memory and flows-redis; the
 * PIN race is about Redis).
 * 1. PIN attempts are decided atomically: parallel guesses never get more than the limit evaluated, and
 *    no PIN is accepted once the limit is reached.
 * 2. A hint without jti is single use whatever its spelling (spare base64url bits of the signature).
 * 4. A hint lives at most hint.maxLifetime; what it carries is kept only for the flow; the PIN only hashed.
 * 5. Unauthenticated requests write nothing; `state` and `nonce` are bounded.
 * 6. A claim nested thousands of levels deep is a template mismatch, never a 500.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, offerFromPage, pkcePair, postForm, resolveOfferLink } from '../helpers/rp.js';
import { MemoryStore } from '../../src/store/memory.js';
import { createRedisStore, type RedisStore } from '../../src/store/redis.js';
import { PinAttempts } from '../../src/issuance/pinAttempts.js';
import { REDIS_URL } from '../helpers/stores.js';
import type { Store } from '../../src/store/types.js';
import { pushAuthorization } from '../helpers/flows.js';

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const CLIENT = { id: 'issuer-pkce', secret: SECRETS.pkceIssuer };
const ATTRIBUTES = { FirstName: 'Ada', LastName: 'Lovelace' };
const onRedis = process.env.TEST_STORE === 'redis';
const prefix = `test:hardening:${randomBytes(6).toString('hex')}:`;

let svc: TestService;
let store: Store;

/**
 * The keys the service holds, to see what a request wrote; on Redis without the receipts of earlier
 * calls (src/store/redisScripts.ts), which expire while a test runs.
 */
async function keyCount(): Promise<number> {
  if (store instanceof MemoryStore) return store.size;
  return (await (store as RedisStore).client.keys(`${prefix}*`)).filter((k) => !k.includes(':rcpt:')).length;
}

beforeAll(async () => {
  store = onRedis ? await createRedisStore({ url: REDIS_URL, keyPrefix: prefix }) : new MemoryStore();
  svc = await startTestService({}, { store });
});
afterAll(async () => {
  if (store && !(store instanceof MemoryStore)) {
    const keys = await (store as RedisStore).client.keys(`${prefix}*`);
    if (keys.length) await (store as RedisStore).client.del(...keys.map((k) => k.slice(0)));
  }
  await svc?.stop();
});

const parFields = (hint: string, extra: Record<string, string> = {}) => {
  const { challenge } = pkcePair();
  return {
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid issue.EmployeeBadge',
    state: 's',
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: hint,
    ...extra,
  };
};

/** A hint signed over JSON text given as it is (a claim nested too deep for JSON.stringify is written out). */
function hintOverText(payload: string): string {
  const encode = (v: string) => Buffer.from(v).toString('base64url');
  const input = `${encode(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${encode(payload)}`;
  return `${input}.${createHmac('sha256', CLIENT.secret).update(input).digest('base64url')}`;
}

const hintOf = (claims: Record<string, unknown>, o: { expiresIn?: number; jti?: string } = {}) =>
  makeHint({ clientId: CLIENT.id, secret: CLIENT.secret, audience: svc.url, claims, ...o });

/** PAR and the holder's browser up to the prompt; returns the pre-authorized code of its offer. */
async function offerWithPin(pin: string): Promise<string> {
  const { authorizeUrl } = await pushAuthorization(svc.url, parFields(await hintOf({ ...ATTRIBUTES, PinCode: pin })));
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(authorizeUrl);
  const offer = await resolveOfferLink(offerFromPage(prompt.html!));
  return offer.grants[PRE_AUTH]['pre-authorized_code'] as string;
}

async function walletToken(code: string, txCode: string) {
  const res = await fetch(`${svc.url}/wallet/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: PRE_AUTH, 'pre-authorized_code': code, tx_code: txCode }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, string> };
}

describe('1. PIN attempts under parallel requests', () => {
  it('20 parallel token requests, 19 wrong PINs and the right one last, 10 rounds: never more than 3 wrong PINs evaluated', async () => {
    for (let round = 0; round < 10; round++) {
      const code = await offerWithPin('2468');
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) => walletToken(code, i === 19 ? '2468' : String(1000 + i))),
      );
      const wrong = answers.slice(0, 19);
      const evaluated = wrong.filter((a) => /attempt\(s\) left/.test(a.body.error_description ?? ''));
      expect(evaluated.length, `round ${round}`).toBeLessThanOrEqual(2);
      expect(wrong.every((a) => a.status === 400 && a.body.error === 'invalid_grant')).toBe(true);
      const right = answers[19];
      // the right PIN is either evaluated while attempts were left, or refused like any PIN after the limit
      if (right.status !== 200)
        expect(right.body).toMatchObject({
          error: 'invalid_grant',
          error_description: expect.stringContaining('no attempts left'),
        });
      // once the limit is reached, the right PIN is refused
      expect(await walletToken(code, '2468')).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    }
  });

  it('the count and the decision are one atomic step in the store: a right PIN issued after 3 wrong ones is refused, also when all 20 are in flight at once', async () => {
    const pins = new PinAttempts(store, 3);
    for (let round = 0; round < 10; round++) {
      const offerId = `race-${round}-${randomBytes(4).toString('hex')}`;
      const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => pins.attempt(offerId, i === 19, 60)));
      expect(outcomes.filter((o) => o.kind === 'retry')).toHaveLength(2);
      expect(outcomes.filter((o) => o.kind === 'revoke')).toHaveLength(1);
      expect(outcomes[19]).toEqual({ kind: 'exhausted' });
    }
  });
});

describe('2. hint replay without jti', () => {
  it('a hint without jti backs one flow, however its signature is spelled (non-PAR, Version 2)', async () => {
    const now = Math.floor(Date.now() / 1000);
    const hint = await new SignJWT({ ...ATTRIBUTES })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(CLIENT.id)
      .setAudience(svc.url)
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(new TextEncoder().encode(CLIENT.secret));
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(hint.at(-1)!);
    // an HS256 signature is 32 bytes: its 43rd character carries 2 spare bits, so 4 spellings verify
    const spellings = [0, 1, 2, 3].map((bits) => `${hint.slice(0, -1)}${alphabet[(last & ~3) | bits]}`);
    const outcomes: string[] = [];
    for (const spelling of spellings) {
      const { challenge } = pkcePair();
      const url = `${svc.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid issue.EmployeeBadge', nonce: 'n', state: 's', code_challenge: challenge, code_challenge_method: 'S256', id_token_hint: spelling })}`;
      const res = await fetch(url, { redirect: 'manual' });
      const location = new URL(res.headers.get('location')!, svc.url);
      outcomes.push(
        location.searchParams.get('error_description') ?? location.pathname.split('/').slice(0, 3).join('/'),
      );
    }
    expect(outcomes[0]).toBe('/interaction/v2');
    expect(outcomes.slice(1)).toEqual(
      Array(3).fill('id_token_hint has already been used: each hint backs one credential'),
    );
  });
});

describe('4. what a hint leaves in the store', () => {
  it.each([
    ['ten years', 10 * 365 * 86400],
    ['2^53 seconds', 2 ** 53],
    ['1e308 seconds', 1e308],
  ])(
    'a hint that expires in %s is refused at PAR (400 invalid_request naming hint.maxLifetime), and writes nothing',
    async (_what, seconds) => {
      const before = await keyCount();
      const now = Math.floor(Date.now() / 1000);
      const hint = await new SignJWT({ ...ATTRIBUTES, PinCode: '9876' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(CLIENT.id)
        .setAudience(svc.url)
        .setJti(randomBytes(8).toString('hex'))
        .setExpirationTime(now + seconds)
        .sign(new TextEncoder().encode(CLIENT.secret));
      const res = await postForm(`${svc.url}/v2.0/oidc/par`, parFields(hint));
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        error: 'invalid_request',
        error_description: expect.stringContaining('hint.maxLifetime'),
      });
      expect(await keyCount()).toBe(before);
    },
  );

  it('the PIN is kept only as a salted hash, and the attributes only as long as the flow may take', async () => {
    await offerWithPin('9876');
    const keys = store instanceof MemoryStore ? [] : await (store as RedisStore).client.keys(`${prefix}*`);
    if (!(store instanceof MemoryStore)) {
      const values = await Promise.all(keys.map((k) => (store as RedisStore).client.get(k).catch(() => null)));
      expect(values.filter((v) => v?.includes('"9876"'))).toEqual([]);
      const config = svc.service.config;
      const flow = config.lifetimes.par + config.lifetimes.interaction;
      // whichever record carries the attributes (the pushed request, or a hint record of its own)
      const carriers = keys.filter((_, i) => values[i]?.includes('"attributes"'));
      expect(carriers.length).toBeGreaterThan(0);
      for (const key of carriers) {
        expect(await (store as RedisStore).client.ttl(key)).toBeLessThanOrEqual(flow);
      }
      const markers = keys.filter((k) => k.startsWith(`${prefix}hint:`) && !/:data$|:rcpt:/.test(k));
      for (const key of markers) {
        expect(await (store as RedisStore).client.get(key)).toBe('1');
      }
    }
  });
});

describe('5. unauthenticated requests', () => {
  it('2,000 authorise requests with unknown client_id/request_uri pairs write nothing, and say the same thing the second time', async () => {
    const before = await keyCount();
    // 50 at a time: what is measured is what the store holds afterwards, not how many sockets the
    // machine can open at once (2,000 together reset connections on a loaded machine)
    const answers: { status: number; body: Record<string, string> }[] = [];
    for (let start = 0; start < 2000; start += 50) {
      answers.push(
        ...(await Promise.all(
          Array.from({ length: 50 }, (_, j) => start + j).map((i) =>
            fetch(
              `${svc.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: i % 2 ? CLIENT.id : `nobody-${i}`, request_uri: `urn:ietf:params:oauth:request_uri:${randomBytes(16).toString('hex')}` })}`,
              { redirect: 'manual' },
            ).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> })),
          ),
        )),
      );
    }
    expect(answers).toHaveLength(2000);
    expect(answers.every((a) => a.status === 400 && a.body.error === 'invalid_request')).toBe(true);
    expect(await keyCount()).toBe(before);
    const again = async () =>
      (
        await fetch(
          `${svc.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, request_uri: 'urn:ietf:params:oauth:request_uri:nope' })}`,
        )
      ).json();
    const [first, second] = [await again(), await again()];
    expect(second).toEqual(first);
    expect(second.error_description).not.toMatch(/already been used/);
  });

  it('a request_uri is still used once: a second authorise with it is refused', async () => {
    const par = await postForm(`${svc.url}/v2.0/oidc/par`, parFields(await hintOf(ATTRIBUTES)));
    const url = `${svc.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, request_uri: par.body.request_uri })}`;
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(303);
    const second = await fetch(url, { redirect: 'manual' });
    expect(second.status).toBe(400);
    expect(await second.json()).toMatchObject({
      error: 'invalid_request',
      error_description: 'request_uri has already been used: push a new request',
    });
  });

  it('a 28 KB state at non-PAR authorise is refused (redirected invalid_request, not echoed) and stores nothing', async () => {
    const before = await keyCount();
    const { challenge } = pkcePair();
    const state = 's'.repeat(28 * 1024);
    const res = await fetch(
      `${svc.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid EmployeeBadge', nonce: 'n', state, code_challenge: challenge, code_challenge_method: 'S256' })}`,
      { redirect: 'manual' },
    );
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toBe('state must be at most 512 characters');
    expect(location.searchParams.has('state')).toBe(false);
    expect(await keyCount()).toBe(before);
  });

  it('state and nonce over 512 characters at PAR -> 400 invalid_request naming them', async () => {
    for (const name of ['state', 'nonce']) {
      const res = await postForm(
        `${svc.url}/v2.0/oidc/par`,
        parFields(await hintOf(ATTRIBUTES), { [name]: 'x'.repeat(513) }),
      );
      expect(res.body).toEqual({
        error: 'invalid_request',
        error_description: `${name} must be at most 512 characters`,
      });
    }
  });
});

describe('6. deeply nested claims', () => {
  /** A hint whose `attribute` is nested `depth` objects deep, as JSON text. */
  const deepHint = (attribute: string, depth: number) => {
    const now = Math.floor(Date.now() / 1000);
    const claims = JSON.stringify({
      ...ATTRIBUTES,
      iss: CLIENT.id,
      aud: svc.url,
      iat: now,
      exp: now + 300,
      jti: randomBytes(8).toString('hex'),
    });
    return hintOverText(`${claims.slice(0, -1)},"${attribute}":${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}}`);
  };

  it('a validly signed hint with a claim nested 5,000 levels deep: PAR 201, then authorise redirects invalid_scope; never a 500', async () => {
    const { authorizeUrl } = await pushAuthorization(svc.url, parFields(deepHint('FirstName', 5000)));
    const browser = new Browser(REDIRECT);
    const done = await browser.follow(authorizeUrl);
    const location = new URL(done.final);
    expect(location.searchParams.get('error')).toBe('invalid_scope');
    expect(location.searchParams.get('error_description')).toMatch(/FirstName.*must be of type string/);
  });

  it('the same through non-PAR authorise (3,000 levels: the query fits the 32 KiB header limit): redirected invalid_scope, never a 500 page', async () => {
    const { challenge } = pkcePair();
    const browser = new Browser(REDIRECT);
    const done = await browser.follow(
      `${svc.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, response_type: 'code', redirect_uri: REDIRECT, scope: 'openid issue.EmployeeBadge', nonce: 'n', state: 's', code_challenge: challenge, code_challenge_method: 'S256', id_token_hint: deepHint('LastName', 3000) })}`,
    );
    expect(done.res?.status).not.toBe(500);
    expect(new URL(done.final).searchParams.get('error')).toBe('invalid_scope');
  });
});
