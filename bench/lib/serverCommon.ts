/**
 * What both server child processes share: counting signatures (installed before the server's modules
 * load), and the IPC protocol the orchestrator drives them with (snapshot = CPU, memory, signature
 * counts, store size; gc; stop).
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import type { KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';

const require = createRequire(import.meta.url);

/** Signatures made in this process, by algorithm family (WebCrypto name + hash, or node:crypto key type). */
export const signCounts: Record<string, number> = {};
const bump = (name: string) => {
  signCounts[name] = (signCounts[name] ?? 0) + 1;
};

function webCryptoName(alg: unknown, key: CryptoKey): string {
  const name = typeof alg === 'string' ? alg : ((alg as { name?: string })?.name ?? 'unknown');
  const hash = (key.algorithm as { hash?: { name?: string } }).hash?.name;
  const curve = (key.algorithm as { namedCurve?: string }).namedCurve;
  if (name === 'RSASSA-PKCS1-v1_5' && hash === 'SHA-256') return 'RS256';
  if (name === 'ECDSA' && curve === 'P-256') return 'ES256';
  if (name === 'HMAC' && hash === 'SHA-256') return 'HS256';
  return [name, hash, curve].filter(Boolean).join('/');
}

/**
 * Wraps WebCrypto `subtle.sign` (what jose, hence oidc-provider and our ID token signer, use) and
 * node:crypto `sign` / `createSign` (then re-syncs the ESM named exports), so every signature is counted.
 * HMAC counts as a signature here too (jose computes HS256 with subtle.sign); it is reported apart.
 */
export function installSignCounter(): void {
  const proto = Object.getPrototypeOf(globalThis.crypto.subtle) as SubtleCrypto;
  const original = proto.sign;
  proto.sign = function sign(
    this: SubtleCrypto,
    alg: Parameters<SubtleCrypto['sign']>[0],
    key: CryptoKey,
    data: BufferSource,
  ) {
    bump(webCryptoName(alg, key));
    return original.call(this, alg, key, data);
  } as SubtleCrypto['sign'];

  const nodeCrypto = require('node:crypto') as typeof import('node:crypto');
  const nodeSign = nodeCrypto.sign;
  (nodeCrypto as { sign: unknown }).sign = function sign(
    algorithm: string | null | undefined,
    data: NodeJS.ArrayBufferView,
    key: unknown,
    cb?: unknown,
  ) {
    const k = key as KeyObject | { key?: KeyObject };
    const type =
      (k as KeyObject).asymmetricKeyType ??
      ((k as { key?: KeyObject }).key as KeyObject | undefined)?.asymmetricKeyType ??
      'key';
    bump(`node:${type}/${algorithm ?? 'none'}`);
    return (nodeSign as (...a: unknown[]) => unknown)(algorithm, data, key, cb);
  };
  const nodeCreateSign = nodeCrypto.createSign;
  (nodeCrypto as { createSign: unknown }).createSign = function createSign(algorithm: string, options?: unknown) {
    const signer = (nodeCreateSign as (...a: unknown[]) => ReturnType<typeof nodeCreateSign>)(algorithm, options);
    const s = signer.sign.bind(signer);
    (signer as { sign: unknown }).sign = (key: unknown, enc?: unknown) => {
      bump(`node:createSign/${algorithm}`);
      return (s as (...a: unknown[]) => unknown)(key, enc);
    };
    return signer;
  };
  syncBuiltinESMExports();
}

export interface Snapshot {
  cpu: NodeJS.CpuUsage;
  mem: NodeJS.MemoryUsage;
  signs: Record<string, number>;
  storeSize?: number;
  at: number;
  /** monotonic clock, µs (the clock V8 stamps --cpu-prof samples with), to cut a profile to the measured phase */
  monoUs: number;
  /** CPU ms of the main (JavaScript) thread, from /proc (10 ms ticks); the rest of `cpu` is libuv's pool (WebCrypto) and V8's helpers (GC, compiler) */
  mainThreadCpuMs?: number;
  /** read- and write-type system calls of the whole process so far (Linux: /proc/self/io syscr, syscw), or undefined elsewhere */
  syscalls?: { reads: number; writes: number };
}

/** The main thread's CPU time so far, in ms (Linux: /proc/self/task/<pid>/stat, utime + stime), or undefined elsewhere. */
function mainThreadCpuMs(): number | undefined {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // after "pid (comm) ": field 3 onwards
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in USER_HZ (100 on Linux)
  } catch {
    return undefined;
  }
}

/** The process's read- and write-type system calls so far (socket reads and writes included), from /proc/self/io. */
function syscalls(): { reads: number; writes: number } | undefined {
  try {
    const io = readFileSync('/proc/self/io', 'utf8');
    const reads = /^syscr: (\d+)$/m.exec(io);
    const writes = /^syscw: (\d+)$/m.exec(io);
    return reads && writes ? { reads: Number(reads[1]), writes: Number(writes[1]) } : undefined;
  } catch {
    return undefined;
  }
}

export type ParentMessage = { id: number; type: 'snapshot' | 'gc' | 'stop' };

/** Serves the orchestrator's IPC requests. `storeSize` reports the memory store's entry count (soak). */
export function serveIpc(opts: { stop: () => Promise<void>; storeSize?: () => number | undefined }): void {
  process.on('message', (msg: ParentMessage) => {
    const reply = (body: Record<string, unknown>) => process.send?.({ id: msg.id, ...body });
    switch (msg.type) {
      case 'snapshot': {
        const snap: Snapshot = {
          cpu: process.cpuUsage(),
          mem: process.memoryUsage(),
          signs: { ...signCounts },
          storeSize: opts.storeSize?.(),
          at: Date.now(),
          monoUs: Number(process.hrtime.bigint() / 1000n),
          mainThreadCpuMs: mainThreadCpuMs(),
          syscalls: syscalls(),
        };
        reply({ snapshot: snap });
        break;
      }
      case 'gc': {
        const gc = (globalThis as { gc?: () => void }).gc;
        if (gc) {
          gc();
          gc();
        }
        reply({ gc: Boolean(gc) });
        break;
      }
      case 'stop':
        void opts.stop().finally(() => {
          reply({ stopped: true });
          // let the reply flush, then exit normally (so --cpu-prof writes its profile)
          setTimeout(() => process.exit(0), 50);
        });
        break;
    }
  });
  // the orchestrator went away: do not linger
  process.on('disconnect', () => process.exit(0));
}
