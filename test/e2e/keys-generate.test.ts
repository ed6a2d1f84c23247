/**
 * Issue 33: an operator who manages key files (keys.generate: false) and upgrades to a release with a new
 * key set is told at start-up which command makes it and what losing it means; `npm run keys -- generate`
 * makes it as the service would, and never overwrites a set in use.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceEnv, writeServiceConfig } from '../helpers/childService.js';
import { loadKeys } from '../../src/keys/keys.js';

const exec = promisify(execFile);
// the command runs no flow, so once is enough (the memory project)
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;

/** `npm run keys -- ...` as an operator runs it; resolves with its exit code and output. */
async function keys(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(
      process.execPath,
      ['--import', 'tsx', join('src', 'main.ts'), 'keys', ...args],
      { env: serviceEnv(), timeout: 60_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

// each test starts the command as its own process: room for a loaded machine, not a tight limit
run(
  'npm run keys -- generate (issue 33: upgrades of deployments that manage their own key files)',
  { timeout: 180_000 },
  () => {
    let dir: string;
    let config: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'vc-keys-generate-'));
      config = writeServiceConfig(dir, {
        base: 'http://127.0.0.1:1',
        port: 1,
        client: { id: 'c', secret: 'secret-0123456789abcdef' },
        redirectUri: 'https://rp.example/cb',
      });
      const parsed = JSON.parse(readFileSync(config, 'utf8'));
      writeFileSync(config, JSON.stringify({ ...parsed, keys: { ...parsed.keys, generate: false } }));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));
    const paths = () => ({ ...JSON.parse(readFileSync(config, 'utf8')).keys, generate: false });

    it('a start-up that misses a set names the command that makes it and what losing it means', async () => {
      await expect(loadKeys(paths(), dir)).rejects.toThrow(
        /id-token\.jwks\.json: key file not found \(keys\.generate is off\)\. Make it with `npm run keys -- generate idToken --config <your config>`/,
      );
    });

    it('makes every set into its configured file (0600), which the service then loads with keys.generate off', async () => {
      const sets = ['idToken', 'credential', 'cookies', 'pairwise'];
      const made = await Promise.all(sets.map((set) => keys('generate', set, '--config', config)));
      sets.forEach((set, i) =>
        expect(made[i], set).toMatchObject({
          code: 0,
          stdout: expect.stringContaining(`${set}: wrote ${join(dir, '')}`),
        }),
      );
      expect(statSync(join(dir, 'pairwise.json')).mode & 0o777).toBe(0o600);
      const { origins, keys: loaded } = await loadKeys(paths(), dir);
      expect(origins.map((o) => o.origin)).toEqual(['file', 'file', 'file', 'file']);
      expect(loaded.idToken.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256' });
      expect(loaded.credential.keys[0]).toMatchObject({ kty: 'EC', alg: 'ES256' });
    });

    it('never overwrites a set in use: exit 1, the file unchanged, and the way to add a key instead', async () => {
      const before = readFileSync(join(dir, 'pairwise.json'), 'utf8');
      const again = await keys('generate', 'pairwise', '--config', config);
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/pairwise\.json exists: nothing was changed/);
      expect(readFileSync(join(dir, 'pairwise.json'), 'utf8')).toBe(before);
    });

    it('an unknown set is a usage error (exit 2) listing the sets', async () => {
      const wrong = await keys('generate', 'verifierKey', '--config', config);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toMatch(/generate needs one of idToken, credential, cookies, pairwise/);
    });
  },
);
