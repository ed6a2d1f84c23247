/**
 * D14: the store on a Redis Cluster. The test starts three masters (no replicas) from Debian's
 * redis-server on loopback ports, creates the cluster with redis-cli and configures the service with
 * `store: { cluster: [...], keyPrefix }`. A full issuance flow (openid-client as relying party, the
 * holder's browser and dev wallet) succeeds on it, its keys are spread over the masters, and single use
 * (D16) holds on the cluster: of 50 concurrent redemptions of one authorization code, and of one
 * pre-authorized code, exactly one succeeds.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offerFromPage, postForm, Browser, resolveOfferLink } from '../helpers/rp.js';
import { expectExactlyOneWinner } from '../helpers/assertions.js';
import { completeIssuance, holderCompletesIssuance, newWallet, pushIssuance } from '../helpers/flows.js';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { keysOn, startRedisCluster, type RedisCluster } from '../helpers/redisServer.js';
import { createRedisStore } from '../../src/store/redis.js';

// These tests start their own Redis Cluster whatever TEST_STORE says; vitest runs test/e2e once per
// store project, so they run only in the flows-redis project and skip the duplicate run in flows-memory
// (describe.skipIf on 'memory' would also run them under any other/unset TEST_STORE).
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const PRE_AUTH = 'urn:ietf:params:oauth:grant-type:pre-authorized_code';
const PIN = '4321';
const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
const CLIENT = { id: 'issuer-pkce', secret: SECRETS.pkceIssuer };

let cluster: RedisCluster | undefined;
let svc: TestService | undefined;
const keyPrefix = `cl:${randomBytes(4).toString('hex')}:`;

/** Keys under this run's prefix on one master. */
const keysOnMaster = (port: number) =>
  keysOn(
    cluster!.processes.find((p) => p.port === port)!,
    `${keyPrefix}*`,
  );

run('D14: the store on a Redis Cluster of three masters', () => {
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    const spec = { cluster: cluster.nodes, keyPrefix };
    svc = await startTestService({ store: spec }, { store: await createRedisStore(spec) });
  }, 60_000);
  afterAll(async () => {
    await svc?.stop();
    await cluster?.destroy();
  });

  const par = () =>
    pushIssuance(svc!.url, { clientId: CLIENT.id, secret: CLIENT.secret, attributes, pin: PIN, redirectUri: REDIRECT });

  it('the service reports the cluster ready', async () => {
    const res = await fetch(`${svc!.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', store: 'redis' });
  });

  it('a full issuance flow succeeds, with its keys spread over the masters', async () => {
    const { config, verifier, state, nonce, authorizeUrl } = await par();
    const { tokens, wallet } = await completeIssuance({ config, verifier, state, nonce, authorizeUrl }, PIN);
    expect(tokens.claims()).toMatchObject({ ...attributes, iss: svc!.url, aud: CLIENT.id, nonce });
    expect(tokens.access_token).toBe(tokens.id_token);
    const [stored] = wallet.list();
    expect(stored.claims).toEqual(attributes);

    // the cluster was really used: this run's keys live on more than one master
    const perNode = await Promise.all(cluster!.nodes.map((n) => keysOnMaster(n.port)));
    expect(perNode.flat().length).toBeGreaterThan(0);
    expect(
      perNode.filter((k) => k.length > 0).length,
      JSON.stringify(perNode.map((k) => k.length)),
    ).toBeGreaterThanOrEqual(2);
  });

  it('getMany reads keys of one hash tag in one MGET (one slot) and keys of different slots one by one', async () => {
    const store = svc!.service.store;
    // tags spread over the three masters: each read stays in its slot
    for (const tag of ['a', 'b', 'c', 'offer-1', 'offer-2']) {
      await store.set(`gm:{${tag}}:x`, { tag }, 60);
      await store.attempt(`gm:{${tag}}:n`, true, 10, 60);
      expect(await store.getMany([`gm:{${tag}}:x`, `gm:{${tag}}:n`, `gm:{${tag}}:none`])).toEqual([
        { tag },
        1,
        undefined,
      ]);
    }
    expect(await store.getMany(['gm:{a}:x', 'gm:{b}:x', 'gm:{c}:x', 'gm:untagged'])).toEqual([
      { tag: 'a' },
      { tag: 'b' },
      { tag: 'c' },
      undefined,
    ]);
  });

  it('commands of one tick on different masters all succeed, a variable-key script among them', async () => {
    const store = svc!.service.store;
    // tags over every master; takeFree's first argument is its key count, not a key, so it must not be
    // routed by it into another master's pipeline beside the SETs of the same tick
    const tags = Array.from({ length: 30 }, (_, i) => `tick-${i}`);
    const results = await Promise.all([
      ...tags.map((t) => store.set(`tf:{${t}}:x`, t, 60)),
      ...tags.map((t) => store.takeFree(`tf:{${t}}:count`, 10, [`tf:{${t}}:i:0`], 'v', 60, `tf:{${t}}:list`)),
    ]);
    expect(results.slice(tags.length)).toEqual(tags.map(() => ({ full: false, taken: 0 })));
    expect(await store.getMany(tags.map((t) => `tf:{${t}}:x`))).toEqual(tags);
  });

  it('D16: 50 concurrent redemptions of one authorization code: exactly one succeeds, the rest invalid_grant', async () => {
    const { verifier, authorizeUrl } = await par();
    const { callbackUrl } = await holderCompletesIssuance(authorizeUrl.href, {
      redirectUri: REDIRECT,
      wallet: await newWallet(),
      pin: PIN,
    });
    const code = new URL(callbackUrl).searchParams.get('code');
    expect(code, callbackUrl).toBeTruthy();
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        postForm(`${svc!.url}/v2.0/oidc/token`, {
          grant_type: 'authorization_code',
          client_id: CLIENT.id,
          client_secret: CLIENT.secret,
          code: code!,
          redirect_uri: REDIRECT,
          code_verifier: verifier,
        }),
      ),
    );
    expectExactlyOneWinner(results);
  });

  it('D16: 50 concurrent redemptions of one pre-authorized code: exactly one succeeds, the rest invalid_grant', async () => {
    const { authorizeUrl } = await par();
    const prompt = await new Browser(REDIRECT).follow(authorizeUrl.href);
    expect(prompt.html, prompt.final).toBeTruthy();
    const offer = await resolveOfferLink(offerFromPage(prompt.html!));
    const preAuthorizedCode: string = offer.grants[PRE_AUTH]['pre-authorized_code'];
    const results = await Promise.all(
      Array.from({ length: 50 }, () =>
        postForm(`${offer.credential_issuer}/token`, {
          grant_type: PRE_AUTH,
          'pre-authorized_code': preAuthorizedCode,
          tx_code: PIN,
        }),
      ),
    );
    expectExactlyOneWinner(results);
  });
});
