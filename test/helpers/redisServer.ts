import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Throw-away Redis processes for tests that need to stop Redis or run a Cluster: Debian's redis-server
 * on 127.0.0.1 and a free port, no persistence, its own temp directory. They never touch the machine's
 * Redis at 6379. Every process started here is killed by `stop()`, and (as a safety net, should a test
 * file die before its afterAll) when the test worker exits.
 */

const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? '/usr/bin/redis-server';
const REDIS_CLI = process.env.REDIS_CLI_BIN ?? '/usr/bin/redis-cli';

const started = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of started) p.kill('SIGKILL');
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/**
 * A free loopback port; with `clusterBus`, port + 10000 (Redis Cluster's bus port) is free as well.
 * Random ports in 20000-39999 so that parallel test files rarely pick the same one (bounded tries).
 */
export async function freePort(opts: { clusterBus?: boolean } = {}): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    if ((await portIsFree(port)) && (!opts.clusterBus || (await portIsFree(port + 10_000)))) return port;
  }
  throw new Error('no free loopback port found in 200 tries');
}

/** redis-cli against 127.0.0.1:port; resolves with stdout (rejects on a non-zero exit or after timeoutMs). */
export function redisCli(port: number, args: string[], timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      REDIS_CLI,
      ['-h', '127.0.0.1', '-p', String(port), ...args],
      { timeout: timeoutMs },
      (err, stdout, stderr) => {
        if (err) reject(Object.assign(err, { stderr: String(stderr), stdout: String(stdout) }));
        else resolve(String(stdout));
      },
    );
  });
}

/** Polls `check` every intervalMs until it returns true or the deadline passes (then throws `what`). */
export async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  deadlineMs = 10_000,
  intervalMs = 50,
): Promise<number> {
  const start = Date.now();
  const maxTries = Math.ceil(deadlineMs / intervalMs) + 1;
  for (let i = 0; i < maxTries && Date.now() - start <= deadlineMs; i++) {
    if (await check().catch(() => false)) return Date.now() - start;
    await sleep(intervalMs);
  }
  throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
}

export interface RedisProcess {
  readonly port: number;
  readonly url: string;
  readonly dir: string;
  /** Is the process running (started and not yet exited)? */
  readonly running: boolean;
  /** Starts redis-server (again) on the same port and waits until it answers PING. */
  start(): Promise<void>;
  /** Stops the process (SIGKILL: as abrupt as a crash or a network cut) and waits for its exit. */
  stop(): Promise<void>;
  /** SIGSTOP: the process keeps its connections open but answers nothing (a hung Redis). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
  cli(...args: string[]): Promise<string>;
  /** Stops the process for good and removes its directory. */
  destroy(): Promise<void>;
}

export async function startRedis(
  opts: { port?: number; args?: string[]; clusterBus?: boolean } = {},
): Promise<RedisProcess> {
  const port = opts.port ?? (await freePort({ clusterBus: opts.clusterBus }));
  const dir = mkdtempSync(join(tmpdir(), `vc-redis-${port}-`));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--loglevel',
    'warning',
    ...(opts.args ?? []),
  ];
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const handle: RedisProcess = {
    port,
    url: `redis://127.0.0.1:${port}/0`,
    dir,
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    async start() {
      if (handle.running) return;
      const p = spawn(REDIS_SERVER, args, { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      p.stderr?.on('data', (d) => {
        if (stderr.length < 4_000) stderr += String(d);
      });
      started.add(p);
      child = p;
      exited = new Promise<void>((resolve) =>
        p.once('exit', () => {
          started.delete(p);
          resolve();
        }),
      );
      try {
        await waitFor(
          `redis-server on port ${port} to answer PING`,
          async () => {
            if (p.exitCode !== null) throw new Error(`redis-server exited: ${stderr}`);
            return (await redisCli(port, ['ping'], 2_000)).trim() === 'PONG';
          },
          10_000,
        );
      } catch (err) {
        p.kill('SIGKILL');
        throw new Error(`${(err as Error).message}; redis-server stderr: ${stderr}`, { cause: err });
      }
    },
    async stop() {
      if (!child) return;
      child.kill('SIGKILL');
      await exited;
    },
    pause() {
      if (handle.running) child!.kill('SIGSTOP');
    },
    resume() {
      if (handle.running) child!.kill('SIGCONT');
    },
    cli: (...cliArgs: string[]) => redisCli(port, cliArgs),
    async destroy() {
      await handle.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await handle.start();
  return handle;
}

/** The keys matching `pattern` on one Redis (SCAN, a bounded number of iterations). */
export async function keysOn(node: RedisProcess, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  for (let i = 0; i < 1_000; i++) {
    const [next, ...found] = (await node.cli('scan', cursor, 'match', pattern, 'count', '1000')).trim().split('\n');
    keys.push(...found.filter(Boolean));
    cursor = next;
    if (cursor === '0') return keys;
  }
  throw new Error('SCAN did not finish in 1000 iterations');
}

/** The keys matching `pattern` on every master of the cluster. */
export async function clusterKeys(cluster: RedisCluster, pattern: string): Promise<string[]> {
  return (await Promise.all(cluster.processes.map((p) => keysOn(p, pattern)))).flat();
}

export interface RedisCluster {
  nodes: { host: string; port: number }[];
  processes: RedisProcess[];
  destroy(): Promise<void>;
}

/**
 * A Redis Cluster of `masters` masters and no replicas, each its own redis-server on loopback, created
 * with `redis-cli --cluster create` and ready (`cluster_state:ok` on every node) when this resolves.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const processes: RedisProcess[] = [];
  const destroy = async () => {
    await Promise.all(processes.map((p) => p.destroy()));
  };
  try {
    for (let i = 0; i < masters; i++) {
      const port = await freePort({ clusterBus: true });
      // a relative cluster-config-file lands in the node's own --dir (redis-server changes into it first)
      processes.push(
        await startRedis({
          port,
          clusterBus: true,
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            `nodes-${port}.conf`,
            '--cluster-node-timeout',
            '5000',
          ],
        }),
      );
    }
    const addrs = processes.map((p) => `127.0.0.1:${p.port}`);
    await redisCli(
      processes[0].port,
      ['--cluster', 'create', ...addrs, '--cluster-replicas', '0', '--cluster-yes'],
      30_000,
    );
    for (const p of processes) {
      await waitFor(
        `cluster_state:ok on 127.0.0.1:${p.port}`,
        async () => (await p.cli('cluster', 'info')).includes('cluster_state:ok'),
        20_000,
        100,
      );
    }
    return { nodes: processes.map((p) => ({ host: '127.0.0.1', port: p.port })), processes, destroy };
  } catch (err) {
    await destroy();
    throw err;
  }
}
