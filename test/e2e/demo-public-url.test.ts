/**
 * The demo publishes its secrets (config/demo.yaml) and its PID issuer signs whatever a visitor asks, so
 * `serve` refuses `demo: true` on a base URL that is not this machine unless the operator says so
 * (`demoOnPublicUrl`, `DEMO_ON_PUBLIC_URL=true` with config/demo.yaml, docs/operations.md), and warns when the
 * demo listens where other machines reach it (the container image's HOST=0.0.0.0). The real command on the
 * real config/demo.yaml (a copy, so that its keys go to a temporary folder), as the image runs it.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { serviceEnv } from '../helpers/childService.js';
import { freePort, waitFor } from '../helpers/redisServer.js';

// a child process on the memory store, whatever TEST_STORE says: once, in the Redis project
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;
const exec = promisify(execFile);
// not this machine (https: the demo's webhook and issuers take http on loopback hosts only)
const PUBLIC = 'https://demo.example.net';

run('demo: true on a base URL that is not this machine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vc-demo-public-'));
  mkdirSync(join(dir, 'config'));
  // ../keys from the config's folder: the keys of a start land in dir/keys, not in the working tree
  const config = join(dir, 'config', 'demo.yaml');
  copyFileSync(join('config', 'demo.yaml'), config);
  // the card images config/demo.yaml names beside it
  cpSync(join('config', 'cards'), join(dir, 'config', 'cards'), { recursive: true });
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const env = (port: number, more: Record<string, string>): NodeJS.ProcessEnv => ({
    ...serviceEnv(),
    PORT: String(port),
    HOST: '127.0.0.1',
    ...more,
  });

  /** `serve` started; resolves once /healthz answers on 127.0.0.1, with what it printed so far. */
  async function serve(port: number, more: Record<string, string>): Promise<() => string> {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', config], {
      env: env(port, more),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
    await waitFor(
      'the demo to answer /healthz',
      async () =>
        child.exitCode !== null ||
        (await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(1_000) })).ok,
      40_000,
      100,
    );
    if (child.exitCode !== null) throw new Error(`the service exited: ${output}`);
    return () => output;
  }

  it('is refused at start-up, naming the host and DEMO_ON_PUBLIC_URL, before any key is made; exit 1, no stack', async () => {
    const port = await freePort();
    const failed = await exec(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', config], {
      env: env(port, { BASE_URL: PUBLIC }),
      timeout: 60_000,
    }).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('demo: is true on a base URL that is not this machine (demo.example.net)');
    // the one problem of the file
    expect(failed?.stderr.match(/^\s+- /gm)).toHaveLength(1);
    expect(failed?.stderr).toContain('DEMO_ON_PUBLIC_URL=true');
    expect(failed?.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dir, 'keys'))).toBe(false);
  }, 60_000);

  it('starts when the operator says so (DEMO_ON_PUBLIC_URL=true), with a warning', async () => {
    const port = await freePort();
    const output = await serve(port, { BASE_URL: PUBLIC, DEMO_ON_PUBLIC_URL: 'true' });
    await waitFor('the warning', async () => output().includes('demoOnPublicUrl'), 10_000);
    expect(output()).toContain(`demo: served at ${PUBLIC} (demoOnPublicUrl)`);
  }, 60_000);

  it('on localhost (npm start, compose.yaml) it starts; listening on every interface (the image) it warns', async () => {
    const port = await freePort();
    const output = await serve(port, { BASE_URL: `http://localhost:${port}`, HOST: '0.0.0.0' });
    await waitFor('the warning', async () => output().includes('other machines reach it'), 10_000);
    expect(output()).toContain('demo: listening on 0.0.0.0, so other machines reach it too');
    expect(output()).not.toContain('demoOnPublicUrl');
  }, 60_000);
});
