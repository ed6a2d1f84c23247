import { afterEach, beforeEach, describe, it, expect } from 'vitest';
import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, compactVerify, CompactSign, importJWK, type JWK } from 'jose';
import { loadKeys, publicJwks, KEY_STORE_KEYS, type KeyPaths } from '../../../src/keys/keys.js';
import { MemoryStore } from '../../../src/store/memory.js';
import { StoreUnavailableError } from '../../../src/store/redis.js';

let dir: string;
let reference: Promise<Awaited<ReturnType<typeof loadKeys>>['keys']> | undefined;
/** One generated key set shared by the refusal tests (RSA generation is slow). */
const referenceKeys = async () => {
  reference ??= (async () => {
    const refDir = await mkdtemp(join(tmpdir(), 'vc-keys-ref-'));
    try {
      return (await loadKeys(paths({ cookies: 'c.json', idToken: 'id.json', credential: 'cred.json' }), refDir)).keys;
    } finally {
      await rm(refDir, { recursive: true, force: true });
    }
  })();
  return reference;
};
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'vc-keys-test-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const paths = (over: Partial<KeyPaths> = {}): KeyPaths => ({
  idToken: './keys/id-token.jwks.json',
  credential: './keys/credential.jwks.json',
  cookies: './keys/cookies.json',
  pairwise: './keys/pairwise.json',
  generate: true,
  ...over,
});

async function expectRejectionNaming(p: Promise<unknown>, file: string, fragment?: RegExp): Promise<void> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected loadKeys to refuse').toBeInstanceOf(Error);
  const message = (caught as Error).message;
  expect(message).toContain(file);
  if (fragment) expect(message).toMatch(fragment);
}

describe('keys: generated on first start (D15 keys, spec: Authentication 6)', () => {
  it('generates an RS256 ID-token key, an ES256 credential key, a cookie secret and a pairwise secret (D12)', async () => {
    const { keys, origins } = await loadKeys(paths(), dir);
    expect(origins).toEqual([
      { set: 'idToken', origin: 'generated-file', file: join(dir, 'keys/id-token.jwks.json') },
      { set: 'credential', origin: 'generated-file', file: join(dir, 'keys/credential.jwks.json') },
      { set: 'cookies', origin: 'generated-file', file: join(dir, 'keys/cookies.json') },
      { set: 'pairwise', origin: 'generated-file', file: join(dir, 'keys/pairwise.json') },
    ]);
    expect(Buffer.from(keys.pairwise[0], 'base64url').length).toBe(32);

    expect(keys.idToken.keys).toHaveLength(1);
    const rsa = keys.idToken.keys[0];
    expect(rsa).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(rsa.d).toBeTypeOf('string');
    expect(rsa.kid).toBe(await calculateJwkThumbprint(rsa));
    // 2048-bit modulus: 256 bytes, base64url without padding
    expect(Buffer.from(rsa.n!, 'base64url').length).toBe(256);

    expect(keys.credential.keys).toHaveLength(1);
    const ec = keys.credential.keys[0];
    expect(ec).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(ec.d).toBeTypeOf('string');
    expect(ec.kid).toBe(await calculateJwkThumbprint(ec));

    expect(keys.cookies).toHaveLength(1);
    expect(Buffer.from(keys.cookies[0] as string, 'base64url').length).toBe(32);
  });

  it('writes every generated file readable by its owner only (mode 0600)', async () => {
    await loadKeys(paths(), dir);
    for (const name of ['id-token.jwks.json', 'credential.jwks.json', 'cookies.json']) {
      const s = await stat(join(dir, 'keys', name));
      expect((s.mode & 0o777).toString(8), name).toBe('600');
    }
  });

  it('generates keys that sign and verify (RS256 ID tokens, ES256 credentials)', async () => {
    const { keys } = await loadKeys(paths(), dir);
    for (const [jwk, alg] of [
      [keys.idToken.keys[0], 'RS256'],
      [keys.credential.keys[0], 'ES256'],
    ] as const) {
      const jws = await new CompactSign(new TextEncoder().encode('hello'))
        .setProtectedHeader({ alg, kid: jwk.kid })
        .sign(await importJWK(jwk, alg));
      const pub = await importJWK(publicJwks({ keys: [jwk] }).keys[0], alg);
      const { payload } = await compactVerify(jws, pub);
      expect(new TextDecoder().decode(payload)).toBe('hello');
    }
  });

  it('loads the same keys on the second start instead of generating new ones', async () => {
    const first = await loadKeys(paths(), dir);
    const before = await readFile(join(dir, 'keys/id-token.jwks.json'), 'utf8');
    const second = await loadKeys(paths(), dir);
    expect(second.origins.map((o) => o.origin)).toEqual(['file', 'file', 'file', 'file']);
    expect(second.keys).toEqual(first.keys);
    expect(await readFile(join(dir, 'keys/id-token.jwks.json'), 'utf8')).toBe(before);
  });

  it('generates only the files that are missing', async () => {
    const first = await loadKeys(paths(), dir);
    await rm(join(dir, 'keys/cookies.json'));
    const second = await loadKeys(paths(), dir);
    expect(second.origins.filter((o) => o.origin === 'generated-file')).toEqual([
      { set: 'cookies', origin: 'generated-file', file: join(dir, 'keys/cookies.json') },
    ]);
    expect(second.keys.idToken).toEqual(first.keys.idToken);
    expect(second.keys.credential).toEqual(first.keys.credential);
    expect(second.keys.cookies).not.toEqual(first.keys.cookies);
  });

  it('resolves relative paths against the config directory', async () => {
    await loadKeys(
      paths({ idToken: '../outside/id.json', credential: 'cred.json', cookies: 'c/cookies.json' }),
      join(dir, 'config'),
    );
    await expect(stat(join(dir, 'outside/id.json'))).resolves.toBeTruthy();
    await expect(stat(join(dir, 'config/cred.json'))).resolves.toBeTruthy();
    await expect(stat(join(dir, 'config/c/cookies.json'))).resolves.toBeTruthy();
  });

  it('concurrent first starts end up with one key set (the file written first wins)', async () => {
    const results = await Promise.all([loadKeys(paths(), dir), loadKeys(paths(), dir), loadKeys(paths(), dir)]);
    const onDisk = JSON.parse(await readFile(join(dir, 'keys/id-token.jwks.json'), 'utf8'));
    for (const r of results) expect(r.keys.idToken).toEqual(onDisk);
  });
});

describe('keys: generated into a shared store (D20: one key set for every instance on one Redis)', () => {
  // the memory store stands in for Redis here (the same Store contract); test/e2e/shared-keys.test.ts runs three processes on the real Redis
  let store: MemoryStore;
  beforeEach(() => {
    store = new MemoryStore();
  });
  afterEach(async () => store.close());

  const exists = (rel: string) =>
    stat(join(dir, rel)).then(
      () => true,
      () => false,
    );

  it('without key files, generates each set into the store (one key per set) and writes no file', async () => {
    const { keys, origins } = await loadKeys(paths(), dir, { shared: store });
    expect(origins).toEqual([
      {
        set: 'idToken',
        origin: 'generated-store',
        file: join(dir, 'keys/id-token.jwks.json'),
        storeKey: 'keys:idToken',
      },
      {
        set: 'credential',
        origin: 'generated-store',
        file: join(dir, 'keys/credential.jwks.json'),
        storeKey: 'keys:credential',
      },
      { set: 'cookies', origin: 'generated-store', file: join(dir, 'keys/cookies.json'), storeKey: 'keys:cookies' },
      { set: 'pairwise', origin: 'generated-store', file: join(dir, 'keys/pairwise.json'), storeKey: 'keys:pairwise' },
    ]);
    expect(await store.get(KEY_STORE_KEYS.pairwise)).toEqual(keys.pairwise);
    expect(await store.get(KEY_STORE_KEYS.idToken)).toEqual(keys.idToken);
    expect(await store.get(KEY_STORE_KEYS.credential)).toEqual(keys.credential);
    expect(await store.get(KEY_STORE_KEYS.cookies)).toEqual(keys.cookies);
    expect(keys.idToken.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(keys.credential.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(await exists('keys')).toBe(false);
  });

  it('another instance (or the next start) loads the sets from the store', async () => {
    const first = await loadKeys(paths(), dir, { shared: store });
    const second = await loadKeys(paths(), dir, { shared: store });
    expect(second.keys).toEqual(first.keys);
    expect(second.origins.map((o) => o.origin)).toEqual(['store', 'store', 'store', 'store']);
  });

  it('concurrent first starts end up with one key set: exactly one instance generates each set', async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => loadKeys(paths(), dir, { shared: store })));
    for (const r of results) expect(r.keys).toEqual(results[0].keys);
    for (const set of ['idToken', 'credential', 'cookies', 'pairwise']) {
      const generatedBy = results.filter((r) => r.origins.some((o) => o.set === set && o.origin === 'generated-store'));
      expect(generatedBy, set).toHaveLength(1);
    }
  });

  it('an existing key file takes precedence: used as it is, nothing about it goes into the store', async () => {
    const ref = await referenceKeys();
    await mkdir(join(dir, 'keys'));
    await writeFile(join(dir, 'keys/id-token.jwks.json'), JSON.stringify(ref.idToken));
    const { keys, origins } = await loadKeys(paths(), dir, { shared: store });
    expect(keys.idToken).toEqual(ref.idToken);
    expect(origins.map((o) => [o.set, o.origin])).toEqual([
      ['idToken', 'file'],
      ['credential', 'generated-store'],
      ['cookies', 'generated-store'],
      ['pairwise', 'generated-store'],
    ]);
    expect(await store.get(KEY_STORE_KEYS.idToken)).toBeUndefined();
  });

  it('a key file takes precedence over a set already in the store', async () => {
    const shared = await loadKeys(paths(), dir, { shared: store });
    const ref = await referenceKeys();
    await mkdir(join(dir, 'keys'));
    await writeFile(join(dir, 'keys/credential.jwks.json'), JSON.stringify(ref.credential));
    const { keys } = await loadKeys(paths(), dir, { shared: store });
    expect(keys.credential).toEqual(ref.credential);
    expect(keys.idToken).toEqual(shared.keys.idToken);
    expect(await store.get(KEY_STORE_KEYS.credential)).toEqual(shared.keys.credential);
  });

  it('keys.generate off: a missing file is refused even when the store holds a set', async () => {
    await loadKeys(paths(), dir, { shared: store });
    await expectRejectionNaming(
      loadKeys(paths({ generate: false }), dir, { shared: store }),
      join(dir, 'keys/id-token.jwks.json'),
      /not found \(keys\.generate is off\)/,
    );
  });

  it('refuses an unusable set in the store, naming the store key', async () => {
    await store.setPermanentIfAbsent(KEY_STORE_KEYS.idToken, { keys: [{ kty: 'EC', crv: 'P-256', x: 'x', y: 'y' }] });
    await expectRejectionNaming(
      loadKeys(paths(), dir, { shared: store }),
      'store key keys:idToken',
      /keys\[0\] must be a private RSA key/,
    );
  });

  it('refuses to start when the store cannot be reached, rather than sign with keys of its own', async () => {
    const down = Object.assign(new MemoryStore(), {
      get: async () => {
        throw new StoreUnavailableError(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
      },
    });
    await expectRejectionNaming(
      loadKeys(paths(), dir, { shared: down }),
      'store key keys:idToken',
      /cannot be reached \(connect ECONNREFUSED/,
    );
    await down.close();
  });
});

describe('keys: refuses unusable key files, naming the file', () => {
  const write = async (rel: string, text: string) => {
    const file = join(dir, rel);
    await mkdir(join(file, '..'), { recursive: true });
    await writeFile(file, text);
    return file;
  };

  it('refuses a key file that is not JSON', async () => {
    const file = await write('keys/id-token.jwks.json', '{"keys": [');
    await expectRejectionNaming(loadKeys(paths(), dir), file, /cannot read key file/);
  });

  it('refuses a file without keys', async () => {
    const file = await write('keys/id-token.jwks.json', '{"keys": []}');
    await expectRejectionNaming(loadKeys(paths(), dir), file, /at least one private key/);
  });

  it('refuses a public-only RSA key for ID tokens', async () => {
    const keys = await referenceKeys();
    const file = await write('keys/id-token.jwks.json', JSON.stringify(publicJwks(keys.idToken)));
    await expectRejectionNaming(loadKeys(paths(), dir), file, /keys\[0\] must be a private RSA key/);
  });

  it('refuses a public-only EC key for credentials', async () => {
    const keys = await referenceKeys();
    await write('keys/id-token.jwks.json', JSON.stringify(keys.idToken));
    const file = await write('keys/credential.jwks.json', JSON.stringify(publicJwks(keys.credential)));
    await expectRejectionNaming(loadKeys(paths(), dir), file, /keys\[0\] must be a private EC key/);
  });

  it('refuses a key of the wrong type (an EC key where RS256 is expected)', async () => {
    const keys = await referenceKeys();
    const file = await write('keys/id-token.jwks.json', JSON.stringify(keys.credential));
    await expectRejectionNaming(loadKeys(paths(), dir), file, /must be a private RSA key/);
  });

  it('refuses a cookie file that is not an array of secrets', async () => {
    const file = await write('keys/cookies.json', '{"secret": "x"}');
    await expectRejectionNaming(loadKeys(paths(), dir), file, /expected a JSON array of secrets/);
  });

  it('refuses a cookie secret that is empty or not a string, naming its position', async () => {
    for (const [content, at] of [
      ['["a-secret", ""]', 1],
      ['[42]', 0],
      ['["a-secret", null]', 1],
    ] as const) {
      const file = await write('keys/cookies.json', content);
      await expectRejectionNaming(loadKeys(paths(), dir), file, new RegExp(`\\[${at}\\] must be a non-empty string`));
    }
  });

  it('refuses to generate when keys.generate is off, naming the missing file', async () => {
    await expectRejectionNaming(
      loadKeys(paths({ generate: false }), dir),
      join(dir, 'keys/id-token.jwks.json'),
      /not found \(keys\.generate is off\)/,
    );
    await expect(stat(join(dir, 'keys'))).rejects.toThrow();
  });

  it('loads existing files when keys.generate is off', async () => {
    const first = await loadKeys(paths(), dir);
    const second = await loadKeys(paths({ generate: false }), dir);
    expect(second.keys).toEqual(first.keys);
  });
});

describe('publicJwks: what jwks_uri publishes (spec: Issued ID token, "verifiable with the key set at jwks_uri")', () => {
  it('drops every private member of RSA and EC keys and keeps kid, alg, use', async () => {
    const { keys } = await loadKeys(paths(), dir);
    const pub = publicJwks({ keys: [...keys.idToken.keys, ...keys.credential.keys] });
    for (const k of pub.keys) {
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']) expect(k, member).not.toHaveProperty(member);
    }
    expect(pub.keys[0]).toEqual({
      kty: 'RSA',
      n: keys.idToken.keys[0].n,
      e: keys.idToken.keys[0].e,
      alg: 'RS256',
      use: 'sig',
      kid: keys.idToken.keys[0].kid,
    });
    expect(pub.keys[1]).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: keys.credential.keys[0].x,
      y: keys.credential.keys[0].y,
      alg: 'ES256',
      use: 'sig',
      kid: keys.credential.keys[0].kid,
    });
  });

  it('drops a symmetric key value k', () => {
    const oct: JWK = { kty: 'oct', k: 'c2VjcmV0', kid: 'h' };
    expect(publicJwks({ keys: [oct] }).keys).toEqual([{ kty: 'oct', kid: 'h' }]);
  });

  it('does not modify the private key set it is given', async () => {
    const { keys } = await loadKeys(paths(), dir);
    publicJwks(keys.idToken);
    expect(keys.idToken.keys[0].d).toBeTypeOf('string');
  });
});
