/**
 * D20: one key set across instances. Three instances as separate processes, each with its own (empty)
 * keys folder, as on three machines, on one Redis and key prefix, with the default `keys.generate: true`:
 * the first to offer a key set to the store wins and every instance signs with it, so they publish one
 * JWKS and one set of credential keys, and a flow whose steps land on different instances (behind a
 * round-robin proxy) succeeds: cookies signed by one are read by another, the credential one signs is
 * verified with the metadata another publishes, the ID token verifies with the JWKS. Key files still take
 * precedence over the store, and with the memory store the keys are still generated into files.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import { Redis } from 'ioredis';
import { completeIssuance, pushIssuance } from '../helpers/flows.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../helpers/roundRobin.js';
import { generateVerifierCertificates } from '../../src/keys/x509.js';
import { startChildInstance, type ChildInstance } from '../helpers/childInstance.js';
import { REDIS_URL } from '../helpers/stores.js';
import { loadKeys, publicJwks } from '../../src/keys/keys.js';

// separate processes on the machine's Redis, whatever TEST_STORE says: run once, in the Redis project
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const CLIENT = { id: 'shared-keys-client', secret: 'shared-keys-secret-0123456789abcdef' };
const REDIRECT = 'https://rp.example/cb';
const PIN = '1357';
const attributes = { FirstName: 'Ada', LastName: 'Lovelace' };
const KEY_FILES = ['id-token.jwks.json', 'credential.jwks.json', 'cookies.json', 'pairwise.json'];

const dirs: string[] = [];
const newDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'vc-shared-keys-'));
  dirs.push(d);
  return d;
};
const prefixes: string[] = [];
const newPrefix = () => {
  const p = `sk:${randomBytes(4).toString('hex')}:`;
  prefixes.push(p);
  return p;
};
const children: ChildInstance[] = [];
const start = async (o: Omit<Parameters<typeof startChildInstance>[0], 'client' | 'redirectUri'>) => {
  const c = await startChildInstance({ ...o, client: CLIENT, redirectUri: REDIRECT });
  children.push(c);
  return c;
};

async function getJson(url: string): Promise<any> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  expect(res.status, url).toBe(200);
  return res.json();
}
/** The instance's Version 2 JWKS (jwks_uri names the baseUrl; the path is asked of the instance itself). */
async function jwksOf(instance: string): Promise<{ keys: JWK[] }> {
  const discovery = await getJson(`${instance}/v2.0/.well-known/openid-configuration`);
  return getJson(`${instance}${new URL(discovery.jwks_uri).pathname}`);
}
const walletIssuerKeysOf = async (instance: string): Promise<{ keys: JWK[] }> =>
  (await getJson(`${instance}/.well-known/jwt-vc-issuer/wallet`)).jwks;
/** The start-up lines about keys: the set and where it came from, by message. */
const keyLines = (c: ChildInstance) => c.logLines().filter((l) => typeof l.keySet === 'string');

let redis: Redis;

run('D20: one key set across instances on one Redis', () => {
  let proxy: RoundRobinProxy;
  let farm: ChildInstance[];
  let farmPrefix: string;

  beforeAll(async () => {
    redis = new Redis(REDIS_URL);
    proxy = await startRoundRobinProxy();
    farmPrefix = newPrefix();
    // started together, as a deployment rolls out: all three race to generate each set
    farm = await Promise.all(
      [1, 2, 3].map(() => start({ dir: newDir(), base: proxy.url, store: { url: REDIS_URL, keyPrefix: farmPrefix } })),
    );
    proxy.setTargets(farm.map((i) => i.url));
  }, 90_000);

  afterAll(async () => {
    await proxy?.close();
    await Promise.all(children.map((c) => c.stop()));
    // the key sets are stored without a TTL: remove them
    for (const p of prefixes) {
      const keys = await redis.keys(`${p}*`);
      if (keys.length) await redis.del(...keys);
    }
    redis?.disconnect();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('three instances without key files publish one JWKS and one set of credential keys, from the store', async () => {
    const jwks = await Promise.all(farm.map((i) => jwksOf(i.url)));
    expect(jwks[0].keys.length).toBeGreaterThan(0);
    expect(jwks[1]).toEqual(jwks[0]);
    expect(jwks[2]).toEqual(jwks[0]);
    const credentialKeys = await Promise.all(farm.map((i) => walletIssuerKeysOf(i.url)));
    expect(credentialKeys[0].keys.length).toBeGreaterThan(0);
    expect(credentialKeys[1]).toEqual(credentialKeys[0]);
    expect(credentialKeys[2]).toEqual(credentialKeys[0]);

    // the sets are in the store, one key each and without a TTL, and no instance wrote a key file
    const stored = {
      idToken: `${farmPrefix}keys:idToken`,
      credential: `${farmPrefix}keys:credential`,
      cookies: `${farmPrefix}keys:cookies`,
      pairwise: `${farmPrefix}keys:pairwise`,
    };
    for (const key of Object.values(stored)) expect(await redis.ttl(key), key).toBe(-1);
    expect(publicJwks(JSON.parse((await redis.get(stored.idToken))!))).toEqual(jwks[0]);
    expect(publicJwks(JSON.parse((await redis.get(stored.credential))!))).toEqual(credentialKeys[0]);
    for (const i of farm) for (const f of KEY_FILES) expect(() => statSync(join(i.dir, f)), join(i.dir, f)).toThrow();

    // each instance said where each set came from, once per set: exactly one generated it into the store
    for (const set of ['idToken', 'credential', 'cookies', 'pairwise']) {
      const lines = farm.map((i) => keyLines(i).filter((l) => l.keySet === set));
      for (const l of lines) expect(l, set).toHaveLength(1);
      const messages = lines.map((l) => String(l[0].msg));
      expect(
        messages.filter((m) => /generated a new key set into the store/.test(m)),
        set,
      ).toHaveLength(1);
      expect(
        messages.filter((m) => /loaded the key set from the store/.test(m)),
        set,
      ).toHaveLength(2);
    }
    // and never a key's value
    const secrets = [
      ...JSON.parse((await redis.get(stored.idToken))!).keys.flatMap((k: JWK) => [k.d, k.p, k.q]),
      ...JSON.parse((await redis.get(stored.credential))!).keys.map((k: JWK) => k.d),
      ...JSON.parse((await redis.get(stored.cookies))!),
      ...JSON.parse((await redis.get(stored.pairwise))!),
    ];
    for (const i of farm) for (const s of secrets) expect(i.output().includes(s as string)).toBe(false);
  });

  it('an issuance flow whose steps land on different instances succeeds; the ID token verifies with the JWKS', async () => {
    proxy.reset();
    const { config, verifier, state, nonce, authorizeUrl } = await pushIssuance(proxy.url, {
      clientId: CLIENT.id,
      secret: CLIENT.secret,
      attributes,
      pin: PIN,
      redirectUri: REDIRECT,
    });
    const { tokens, wallet } = await completeIssuance({ config, verifier, state, nonce, authorizeUrl }, PIN);
    expect(tokens.claims()).toMatchObject({ ...attributes, iss: proxy.url, aud: CLIENT.id, nonce });
    // the credential the dev wallet received (and verified with the issuer metadata it fetched through the proxy)
    expect(wallet.list()[0].claims).toEqual(attributes);

    // which instance served each step of the flow, in order (from the proxy's record)
    const only = (path: RegExp, method: string) => {
      const served = proxy.instancesFor(path, method);
      expect(served, `${path} in ${JSON.stringify(proxy.served)}`).toHaveLength(1);
      return served[0];
    };
    const steps = {
      par: only(/\/par$/, 'POST'),
      authorise: only(/\/v2\.0\/oidc\/authorize$/, 'GET'),
      prompt: only(/^\/interaction\/v2\/[^/]+$/, 'GET'),
      walletToken: only(/^\/wallet\/token$/, 'POST'),
      walletCredential: only(/^\/wallet\/credential$/, 'POST'),
      // the dev wallet tells the issuer it stored the credential (OpenID4VCI 1.0 §11)
      walletNotification: only(/^\/wallet\/notification$/, 'POST'),
      continue: only(/^\/interaction\/v2\/[^/]+\/continue$/, 'GET'),
      tokenExchange: only(/^\/v2\.0\/oidc\/token$/, 'POST'),
    };
    const order = Object.entries(steps);
    for (let n = 1; n < order.length; n++)
      expect(order[n][1], `${order[n - 1][0]} and ${order[n][0]} on one instance: ${JSON.stringify(steps)}`).not.toBe(
        order[n - 1][1],
      );
    expect(new Set(Object.values(steps)).size).toBe(3);
    expect(
      proxy.served.filter((s) => s.status >= 500),
      JSON.stringify(proxy.served),
    ).toEqual([]);

    // the ID token (signed by the instance that served the token exchange) verifies with the JWKS another publishes
    const other = farm.find((_, n) => n !== steps.tokenExchange)!;
    const { payload, protectedHeader } = await jwtVerify(tokens.id_token!, createLocalJWKSet(await jwksOf(other.url)), {
      issuer: proxy.url,
      audience: CLIENT.id,
    });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload.nonce).toBe(nonce);
  });

  it('key files take precedence over the store: used as they are, and nothing about them goes into the store', async () => {
    // an instance on the farm's prefix with its own ID-token key file only
    const withFile = newDir();
    const own = await loadKeys(
      {
        idToken: join(withFile, 'id-token.jwks.json'),
        credential: join(newDir(), 'c.json'),
        cookies: join(newDir(), 'k.json'),
        pairwise: join(newDir(), 'p.json'),
        generate: true,
      },
      withFile,
    );
    const storedBefore = await redis.get(`${farmPrefix}keys:idToken`);
    // an instance on a fresh prefix with all three key files
    const allFiles = newDir();
    await loadKeys(
      {
        idToken: 'id-token.jwks.json',
        credential: 'credential.jwks.json',
        cookies: 'cookies.json',
        pairwise: 'pairwise.json',
        generate: true,
      },
      allFiles,
    );
    // and its verifier certificate (the config's default paths), so that nothing is generated into the store
    const certificates = await generateVerifierCertificates('127.0.0.1');
    mkdirSync(join(allFiles, 'keys'), { recursive: true });
    writeFileSync(join(allFiles, 'keys', 'verifier-chain.pem'), certificates.chain);
    writeFileSync(join(allFiles, 'keys', 'verifier-key.pem'), certificates.key);
    const freshPrefix = newPrefix();

    const [a, b] = await Promise.all([
      start({ dir: withFile, store: { url: REDIS_URL, keyPrefix: farmPrefix } }),
      start({ dir: allFiles, store: { url: REDIS_URL, keyPrefix: freshPrefix } }),
    ]);

    // a: its file's ID-token keys, not the store's (which stay as they were); the other sets from the store
    expect(await jwksOf(a.url)).toEqual(publicJwks(own.keys.idToken));
    expect(await jwksOf(a.url)).not.toEqual(await jwksOf(farm[0].url));
    expect(await redis.get(`${farmPrefix}keys:idToken`)).toBe(storedBefore);
    expect(await walletIssuerKeysOf(a.url)).toEqual(await walletIssuerKeysOf(farm[0].url));
    expect(keyLines(a).map((l) => [l.keySet, l.msg])).toEqual([
      ['idToken', expect.stringMatching(/loaded from the key file/)],
      ['credential', expect.stringMatching(/loaded the key set from the store/)],
      ['cookies', expect.stringMatching(/loaded the key set from the store/)],
      ['pairwise', expect.stringMatching(/loaded the key set from the store/)],
    ]);

    // b: all four from its files; the store holds no key set under its prefix
    const files = Object.fromEntries(KEY_FILES.map((f) => [f, JSON.parse(readFileSync(join(allFiles, f), 'utf8'))]));
    expect(await jwksOf(b.url)).toEqual(publicJwks(files['id-token.jwks.json']));
    expect(await walletIssuerKeysOf(b.url)).toEqual(publicJwks(files['credential.jwks.json']));
    expect(await redis.keys(`${freshPrefix}keys:*`)).toEqual([]);
    expect(keyLines(b).map((l) => l.msg)).toEqual(Array(4).fill(expect.stringMatching(/loaded from the key file/)));
  });

  it('with the memory store, the keys are still generated into files (0600)', async () => {
    const dir = newDir();
    const m = await start({ dir, store: 'memory' });
    for (const f of KEY_FILES) expect((statSync(join(dir, f)).mode & 0o777).toString(8), f).toBe('600');
    expect(await jwksOf(m.url)).toEqual(publicJwks(JSON.parse(readFileSync(join(dir, 'id-token.jwks.json'), 'utf8'))));
    expect(keyLines(m).map((l) => [l.keySet, l.msg])).toEqual(
      ['idToken', 'credential', 'cookies', 'pairwise'].map((set) => [
        set,
        expect.stringMatching(/generated a new key file/),
      ]),
    );
  });
});
