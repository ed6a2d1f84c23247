import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serviceEnv, writeServiceConfig } from './childService.js';
import { freePort, waitFor } from './redisServer.js';

/**
 * One instance of the service as its own process, started from the TypeScript sources as `npm run
 * serve` does (tsx), with the config of writeServiceConfig (key files in `dir`, which may or may not
 * exist) on the given store, logging at info so that its start-up lines can be read. Every process
 * started here is killed when the test worker exits, should a test file die before its afterAll.
 */

export interface ChildInstance {
  /** where the instance listens (its own address, not the baseUrl) */
  url: string;
  dir: string;
  /** everything the process wrote to stdout and stderr so far */
  output(): string;
  /** the JSON log lines written so far */
  logLines(): Record<string, unknown>[];
  /** SIGTERM, then SIGKILL if it has not exited */
  stop(): Promise<void>;
}

const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of started) p.kill('SIGKILL');
});

export async function startChildInstance(o: {
  dir: string;
  /** the baseUrl (e.g. a proxy in front of several instances) */
  base?: string;
  store: 'memory' | { url: string; keyPrefix: string };
  client: { id: string; secret: string };
  redirectUri: string;
  /** changes to the written config (e.g. key rotation settings) */
  configure?: (config: Record<string, any>) => Record<string, any>;
}): Promise<ChildInstance> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const file = writeServiceConfig(o.dir, { base: o.base ?? url, port, client: o.client, redirectUri: o.redirectUri });
  const written = { ...JSON.parse(readFileSync(file, 'utf8')), store: o.store, logLevel: 'info' };
  writeFileSync(file, JSON.stringify(o.configure ? o.configure(written) : written));
  const child = spawn(process.execPath, ['--import', 'tsx', join('src', 'main.ts'), 'serve', '--config', file], {
    cwd: process.cwd(),
    env: serviceEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => started.delete(child));
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const done = await Promise.race([
      exited.then(() => true),
      new Promise<boolean>((r) => setTimeout(() => r(false), 12_000)),
    ]);
    if (!done) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  try {
    await Promise.race([
      waitFor(
        `the service in ${o.dir} to answer /healthz`,
        async () =>
          (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) }).catch(() => undefined))?.ok ?? false,
        40_000,
        100,
      ),
      exited.then(() => Promise.reject(new Error('the service exited before it answered /healthz'))),
    ]);
  } catch (err) {
    await stop();
    throw new Error(`${(err as Error).message}\n${output}`, { cause: err });
  }
  return {
    url,
    dir: o.dir,
    output: () => output,
    logLines: () =>
      output
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => {
          try {
            return JSON.parse(l) as Record<string, unknown>;
          } catch {
            return {};
          }
        }),
    stop,
  };
}
