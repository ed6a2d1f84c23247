/**
 * Issue 22 (a newcomer's rough edge): `npm start` on a port another program holds says which port and
 * how to choose another (`PORT=`), instead of Node's `listen EADDRINUSE` and a stack, and exits 1.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { serviceEnv, writeServiceConfig } from '../helpers/childService.js';
import { freePort } from '../helpers/redisServer.js';

// a child process on the memory store, whatever TEST_STORE says: once, in the Redis project
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;
const exec = promisify(execFile);

run('npm start on a port in use', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vc-port-in-use-'));
  let holder: Server | undefined;
  afterAll(() => {
    holder?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names the port and PORT=, and exits 1 without a stack', async () => {
    const port = await freePort();
    holder = createServer();
    await new Promise<void>((resolve) => holder!.listen(port, '127.0.0.1', resolve));
    const file = writeServiceConfig(dir, {
      base: `http://127.0.0.1:${port}`,
      port,
      client: { id: 'port-client', secret: 'port-secret-0123456789abcdef012345' },
      redirectUri: 'https://rp.example/cb',
    });
    const failed = await exec(
      process.execPath,
      ['--import', 'tsx', join('src', 'main.ts'), 'serve', '--config', file],
      { env: serviceEnv(), timeout: 60_000 },
    ).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain(`port ${port} on 127.0.0.1 is already in use`);
    expect(failed?.stderr).toContain(`PORT=${port + 1} npm start`);
    expect(failed?.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});
