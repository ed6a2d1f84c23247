/** Starting and talking to the bench's child processes (servers, load generator, crypto rates). */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { ServerSpec } from './config.js';
import type { Snapshot } from './serverCommon.js';
import type { LoadSpec, PhaseResult } from './load.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function waitFor<T>(
  child: ChildProcess,
  pick: (msg: any) => T | undefined,
  timeoutMs: number,
  what: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`${what}: no answer within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (msg: any) => {
      if (msg?.type === 'error') return done(new Error(`${what}: ${msg.error}`));
      const v = pick(msg);
      if (v !== undefined) done(undefined, v);
    };
    const onExit = (code: number | null) => done(new Error(`${what}: the child exited (${code})`));
    function done(err?: Error, v?: T) {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(v as T);
    }
    child.on('message', onMessage);
    child.on('exit', onExit);
  });
}

export interface ServerHandle {
  spec: ServerSpec;
  url: string;
  pid: number;
  child: ChildProcess;
  snapshot(): Promise<Snapshot>;
  gc(): Promise<boolean>;
  stop(): Promise<void>;
}

/** A server in its own process, so that its CPU (process.cpuUsage, all its threads) is its alone. */
export async function startServer(spec: ServerSpec, opts: { nodeFlags?: string[] } = {}): Promise<ServerHandle> {
  const file = here(spec.kind === 'ours' ? './serverOurs.ts' : './serverBaseline.ts');
  const child = fork(file, [], {
    execArgv: ['--import', 'tsx', ...(opts.nodeFlags ?? [])],
    env: { ...process.env, BENCH_SERVER_SPEC: JSON.stringify(spec), NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await waitFor(
    child,
    (m) => (m?.type === 'ready' ? (m as { url: string; pid: number }) : undefined),
    60_000,
    `${spec.kind} server (${spec.store})`,
  );
  let nextId = 1;
  const ask = <T>(type: string, key: string, timeoutMs = 30_000) => {
    const id = nextId++;
    const p = waitFor<T>(child, (m) => (m?.id === id ? (m[key] as T) : undefined), timeoutMs, `${spec.kind} ${type}`);
    child.send({ id, type });
    return p;
  };
  return {
    spec,
    url: ready.url,
    pid: ready.pid,
    child,
    snapshot: () => ask<Snapshot>('snapshot', 'snapshot'),
    gc: () => ask<boolean>('gc', 'gc'),
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await ask('stop', 'stopped', 15_000);
      } catch {
        child.kill('SIGKILL');
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

export interface LoadHandle {
  prepare(spec: LoadSpec): Promise<Record<string, unknown>>;
  /** `slice`: measure only this long (or this many operations); the next measure goes on from there */
  measure(
    onProgress?: (requests: number) => void,
    timeoutMs?: number,
    slice?: { durationMs: number; maxOps: number },
  ): Promise<PhaseResult>;
  exit(): Promise<void>;
}

/** The load generator in its own process. */
export async function startLoad(): Promise<LoadHandle> {
  const child = fork(here('./load.ts'), [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await waitFor(child, (m) => (m?.type === 'up' ? true : undefined), 60_000, 'load process');
  return {
    async prepare(spec) {
      const p = waitFor(
        child,
        (m) => (m?.type === 'prepared' ? (m.info as Record<string, unknown>) : undefined),
        600_000,
        `prepare ${spec.scenario}`,
      );
      child.send({ type: 'prepare', spec });
      return p;
    },
    async measure(onProgress, timeoutMs = 600_000, slice) {
      const progress = (m: any) => {
        if (m?.type === 'progress') onProgress?.(m.requests as number);
      };
      child.on('message', progress);
      try {
        const p = waitFor(
          child,
          (m) => (m?.type === 'result' ? (m.result as PhaseResult) : undefined),
          timeoutMs,
          'measure',
        );
        child.send({ type: 'measure', slice });
        return await p;
      } finally {
        child.off('message', progress);
      }
    },
    async exit() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.send({ type: 'exit' });
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    },
  };
}

export interface CryptoRate {
  perSecond: number;
  cpuMsPerOp: number;
  count: number;
  /** CPU ms per operation of each consecutive chunk of the measure */
  samples: number[];
}

export async function cryptoRates(
  durationMs: number,
): Promise<
  Record<'rs256' | 'rs256WebCrypto' | 'es256Sign' | 'es256Verify' | 'sdJwtVc' | 'webhookSignature', CryptoRate>
> {
  const child = fork(here('./cryptoRates.ts'), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_CRYPTO_MS: String(durationMs) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return waitFor(child, (m) => (m?.type === 'rates' ? m.rates : undefined), 120_000, 'crypto rates');
}
