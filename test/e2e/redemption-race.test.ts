/**
 * Issue 31 §6, D14: of concurrent redemptions of one pre-authorized code exactly one wins, and the winner's
 * token stays usable. The losers of the race, however late they reach the edge (up to RACE_WINDOW_SECONDS
 * after the winner's token), are refused there without reaching oidc-provider, which would take them
 * for replays and revoke the winner's grant. A replay after that window is refused and revokes what the
 * code issued (RFC 6749 §4.1.2, D16). On one instance with the run's store (memory and Redis), and across
 * two instances (separate processes) sharing one Redis behind a round-robin proxy.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectExactlyOneWinner } from '../helpers/assertions.js';
import { pushIssuance } from '../helpers/flows.js';
import { Browser, offerFromPage, resolveOfferLink } from '../helpers/rp.js';
import {
  credentialRequest,
  nonce,
  offer,
  PRE_AUTH,
  proof,
  startIssuer,
  tokenRequest,
  type Running,
} from '../helpers/walletIssuer.js';
import { RACE_WINDOW_SECONDS } from '../../src/issuance/offers.js';
import { RACE_LOST } from '../../src/issuance/tokenEdge.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../helpers/roundRobin.js';
import { startChildInstance, type ChildInstance } from '../helpers/childInstance.js';
import { REDIS_URL } from '../helpers/stores.js';

const PIN = '2468';
const RACERS = 20;

type Answer = { status: number; body: Record<string, string> };

/** The race's one token: its answer, and the losers' answers. */
function winnerOf(results: Answer[]): { winner: Answer; losers: Answer[] } {
  expectExactlyOneWinner(results);
  const winner = results.find((r) => r.status === 200)!;
  return { winner, losers: results.filter((r) => r !== winner) };
}

const pastTheWindow = () => new Promise((resolve) => setTimeout(resolve, (RACE_WINDOW_SECONDS + 1) * 1000));

/** The credential request the wallet makes with its access token (a fresh proof key and server nonce). */
async function credentialFor(baseUrl: string, accessToken: string) {
  return credentialRequest(
    baseUrl,
    accessToken,
    await proof({ aud: `${baseUrl}/wallet`, nonce: await nonce(baseUrl) }),
  );
}

describe("issue 31 §6: concurrent redemptions of one pre-authorized code on one instance (the run's store)", () => {
  let running: Running;
  beforeAll(async () => {
    running = await startIssuer();
  });
  afterAll(async () => {
    await running?.close();
  });

  const race = (code: string, pin?: string) =>
    Promise.all(
      Array.from({ length: RACERS }, () =>
        tokenRequest(running.baseUrl, { 'pre-authorized_code': code, ...(pin ? { tx_code: pin } : {}) }),
      ),
    );

  it(`of ${RACERS} concurrent redemptions one gets a token, and that token gets the credential`, async () => {
    const o = await offer(running, { pin: PIN });
    const { winner, losers } = winnerOf(await race(o.code, PIN));
    for (const l of losers) expect(l.body.error_description).toBe(RACE_LOST);

    const credential = await credentialFor(running.baseUrl, winner.body.access_token);
    expect(credential.status, JSON.stringify(credential.body)).toBe(200);
    expect(credential.body.credentials).toHaveLength(1);
    expect(await running.issuer.offerStatus(o.offerId, o.expiresAt)).toMatchObject({ status: 'done' });
  });

  it('the same without a PIN: one token, and it gets the credential', async () => {
    const o = await offer(running);
    const { winner } = winnerOf(await race(o.code));
    expect((await credentialFor(running.baseUrl, winner.body.access_token)).status).toBe(200);
  });

  it('a second redemption within the race window (a retry, a double tap) is refused and leaves the first token usable', async () => {
    const o = await offer(running, { pin: PIN });
    const first = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: PIN });
    expect(first.status).toBe(200);
    const again = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: PIN });
    expect(again).toEqual({ status: 400, body: { error: 'invalid_grant', error_description: RACE_LOST } });
    expect((await credentialFor(running.baseUrl, first.body.access_token)).status).toBe(200);
  });

  it(`a replay after the race window (${RACE_WINDOW_SECONDS} s) is refused and revokes the winner's token (RFC 6749 §4.1.2)`, async () => {
    const o = await offer(running, { pin: PIN });
    const { winner } = winnerOf(await race(o.code, PIN));
    await pastTheWindow();
    const replay = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: PIN });
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(replay.body.error_description).not.toBe(RACE_LOST);

    const credential = await credentialFor(running.baseUrl, winner.body.access_token);
    expect(credential).toMatchObject({ status: 401, body: { error: 'invalid_token' } });
    // and the replay that revoked bought nothing either: a third request gets no token
    expect((await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: PIN })).status).toBe(400);
  }, 20_000);

  it('a wrong PIN takes no claim: the holder then redeems with the right one, and a race after it has one winner', async () => {
    const o = await offer(running, { pin: PIN });
    const wrong = await tokenRequest(running.baseUrl, { 'pre-authorized_code': o.code, tx_code: '0000' });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(wrong.body.error_description).toMatch(/^invalid tx_code provided: 2 attempt/);
    const { winner } = winnerOf(await race(o.code, PIN));
    expect((await credentialFor(running.baseUrl, winner.body.access_token)).status).toBe(200);
  });
});

// separate processes on the machine's Redis, whatever TEST_STORE says: run once, in the Redis project
const onRedis = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

onRedis('issue 31 §6: concurrent redemptions of one pre-authorized code across two instances on one Redis', () => {
  const CLIENT = { id: 'race-client', secret: 'race-client-secret-0123456789abcdef' };
  const REDIRECT = 'https://rp.example/cb';
  const prefix = `race:${randomBytes(4).toString('hex')}:`;
  const dirs: string[] = [];
  let instances: ChildInstance[] = [];
  let proxy: RoundRobinProxy;

  beforeAll(async () => {
    proxy = await startRoundRobinProxy();
    // one after the other: the first generates the key sets into the store, the second loads them
    for (let n = 0; n < 2; n++) {
      const dir = mkdtempSync(join(tmpdir(), 'vc-race-'));
      dirs.push(dir);
      instances.push(
        await startChildInstance({
          dir,
          base: proxy.url,
          store: { url: REDIS_URL, keyPrefix: prefix },
          client: CLIENT,
          redirectUri: REDIRECT,
        }),
      );
    }
    proxy.setTargets(instances.map((i) => i.url));
  }, 90_000);

  afterAll(async () => {
    await proxy?.close();
    await Promise.all(instances.map((i) => i.stop()));
    instances = [];
    // the key sets are stored without a TTL
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it(`of ${RACERS} concurrent redemptions spread over both instances one gets a token, and that token gets the credential`, async () => {
    const { authorizeUrl } = await pushIssuance(proxy.url, {
      clientId: CLIENT.id,
      secret: CLIENT.secret,
      attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
      pin: PIN,
      redirectUri: REDIRECT,
    });
    const prompt = await new Browser(REDIRECT).follow(authorizeUrl.href);
    expect(prompt.html, prompt.final).toBeTruthy();
    const credentialOffer = await resolveOfferLink(offerFromPage(prompt.html!));
    const code: string = credentialOffer.grants[PRE_AUTH]['pre-authorized_code'];
    expect(credentialOffer.credential_issuer).toBe(`${proxy.url}/wallet`);

    proxy.reset();
    const results = await Promise.all(
      Array.from({ length: RACERS }, () => tokenRequest(proxy.url, { 'pre-authorized_code': code, tx_code: PIN })),
    );
    expect(new Set(proxy.instancesFor(/^\/wallet\/token$/, 'POST'))).toEqual(new Set([0, 1]));
    const { winner, losers } = winnerOf(results);
    for (const l of losers) expect(l.body.error_description).toBe(RACE_LOST);

    const credential = await credentialFor(proxy.url, winner.body.access_token);
    expect(credential.status, JSON.stringify(credential.body)).toBe(200);
    expect(credential.body.credentials).toHaveLength(1);
    expect(
      proxy.served.filter((s) => s.status >= 500),
      JSON.stringify(proxy.served),
    ).toEqual([]);
  });
});
