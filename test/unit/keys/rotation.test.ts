/**
 * D20, issue 21: which key signs, which are published, and rotation of key files (rewritten in place, and
 * picked up by a running instance's KeyRing). Across instances on Redis: test/e2e/key-rotation.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { viewSet } from '../../../src/keys/rotation.js';
import { loadKeys, type KeptJwk } from '../../../src/keys/keys.js';
import { KeyRing } from '../../../src/keys/keyRing.js';
import { rotateKeySet, RotationRefused } from '../../../src/keys/rotate.js';

const T = Date.parse('2026-11-24T12:00:00Z');
const at = (ms: number) => ({
  rotation: { created: new Date(T + ms - 1000).toISOString(), activates: new Date(T + ms).toISOString() },
});
const HOUR = 3_600_000;

describe('viewSet: key states from the dates a set carries', () => {
  it('undated keys (a key file, a generated set): the first signs, the others are kept until removed by hand', () => {
    const v = viewSet([{}, {}], T, HOUR);
    expect(v.signing).toBe(0);
    expect(v.keys.map((k) => k.state)).toEqual(['active', 'retired']);
    expect(v.keys[1].removed).toBeUndefined();
    expect(v.until).toBe(Infinity);
  });

  it('a rotated key is pending until it activates, then signs; the key it superseded is retired then and removed after the keep period', () => {
    const keys = [at(HOUR), {}];
    const pending = viewSet(keys, T, 60_000);
    expect(pending.keys.map((k) => k.state)).toEqual(['pending', 'active']);
    expect(pending.signing).toBe(1);
    expect(pending.until).toBe(T + HOUR);

    const active = viewSet(keys, T + HOUR, 60_000);
    expect(active.keys.map((k) => k.state)).toEqual(['active', 'retired']);
    expect(active.keys[1].retired).toEqual(new Date(T + HOUR));
    expect(active.keys[1].removed).toEqual(new Date(T + HOUR + 60_000));
    expect(active.until).toBe(T + HOUR + 60_000);

    expect(viewSet(keys, T + HOUR + 60_000, 60_000).keys.map((k) => k.state)).toEqual(['active', 'expired']);
  });

  it("the newest activated key signs whatever the order in the set; each older one retires at its successor's activation", () => {
    const keys = [at(-2 * HOUR), at(2 * HOUR), at(-HOUR)];
    const v = viewSet(keys, T, 30 * 60_000);
    expect(v.keys.map((k) => k.state)).toEqual(['expired', 'pending', 'active']);
    expect(v.keys[0].retired).toEqual(new Date(T - HOUR));
    expect(v.signing).toBe(2);
  });

  it('only pending keys (a hand edit): the earliest to activate signs rather than none', () => {
    const v = viewSet([at(2 * HOUR), at(HOUR)], T, HOUR);
    expect(v.signing).toBe(1);
    expect(v.keys.map((k) => k.state)).toEqual(['pending', 'active']);
  });

  it('malformed dates are treated as no dates; an empty set is refused', () => {
    expect(viewSet([{ rotation: { created: 'x', activates: 'soon' } }, at(-HOUR)], T, HOUR).signing).toBe(1);
    expect(() => viewSet([], T, HOUR)).toThrow(/at least one key/);
  });
});

describe('rotating key files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vc-rotate-files-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const paths = {
    idToken: 'id.json',
    credential: 'cred.json',
    cookies: 'cookies.json',
    pairwise: 'pairwise.json',
    generate: true,
  };
  const keep = { idToken: 60_000, credential: 60_000, cookies: 60_000 };

  it('rewrites the file (0600), and a running KeyRing publishes the new key at its next reload and signs with it from activation on', async () => {
    const { keys, origins } = await loadKeys(paths, dir);
    const ring = new KeyRing(keys, origins, { keep });
    const oldKid = ring.idToken.signing().kid;
    const oldCookieSig = ring.cookieKeys.sign('a=1');

    const idOrigin = origins.find((o) => o.set === 'idToken')!;
    // activation well after the checks before it, however slow the machine; then waited for by its date
    const result = await rotateKeySet('idToken', idOrigin, { keep, activateAfterMs: 5_000 });
    expect(result.where).toBe(join(dir, 'id.json'));
    expect(statSync(join(dir, 'id.json')).mode & 0o777).toBe(0o600);
    const onDisk = JSON.parse(readFileSync(join(dir, 'id.json'), 'utf8')) as { keys: KeptJwk[] };
    expect(onDisk.keys).toHaveLength(2);
    expect(onDisk.keys[0].kid).toBe(result.added);
    expect(onDisk.keys[0].rotation?.activates).toBe(result.activates.toISOString());
    // a second rotation while one is pending is refused
    await expect(rotateKeySet('idToken', idOrigin, { keep, activateAfterMs: 400 })).rejects.toBeInstanceOf(
      RotationRefused,
    );

    // before the reload the instance knows nothing of it; after, it publishes it (without its dates or private members) but signs with the old key
    expect(ring.idToken.published().keys.map((k) => k.kid)).toEqual([oldKid]);
    await ring.reload();
    expect(ring.idToken.published().keys.map((k) => k.kid)).toEqual([result.added, oldKid]);
    for (const k of ring.idToken.published().keys)
      expect(Object.keys(k).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
    expect(ring.idToken.signing().kid).toBe(oldKid);
    expect(ring.idToken.signing()).not.toHaveProperty('rotation');

    await new Promise((r) => setTimeout(r, Math.max(0, result.activates.getTime() - Date.now()) + 50));
    expect(ring.idToken.signing().kid).toBe(result.added);

    // cookies: the rotated secret verifies at once, signs after activation; the old one still verifies
    const cookieOrigin = origins.find((o) => o.set === 'cookies')!;
    const cookies = await rotateKeySet('cookies', cookieOrigin, { keep, activateAfterMs: 3_000 });
    await ring.reload();
    expect(ring.cookieKeys.sign('a=1')).toBe(oldCookieSig);
    await new Promise((r) => setTimeout(r, Math.max(0, cookies.activates.getTime() - Date.now()) + 50));
    const newSig = ring.cookieKeys.sign('a=1');
    expect(newSig).not.toBe(oldCookieSig);
    expect(ring.cookieKeys.verify('a=1', oldCookieSig)).toBe(true);
    expect(ring.cookieKeys.verify('a=1', newSig)).toBe(true);
    ring.close();
  });

  it('a file that cannot be read at a reload leaves the keys as they were', async () => {
    const sub = mkdtempSync(join(dir, 'broken-'));
    const { keys, origins } = await loadKeys(paths, sub);
    const ring = new KeyRing(keys, origins, { keep });
    const kid = ring.idToken.signing().kid;
    rmSync(join(sub, 'id.json'));
    await ring.reload();
    expect(ring.idToken.signing().kid).toBe(kid);
    expect(ring.idToken.published().keys).toHaveLength(1);
  });
});
