/**
 * bench/redis-footprint.ts's accounting and verdicts, pure (no I/O):
 *
 * - every write of the service's Redis connection (a round trip: ioredis auto-pipelines the commands of a
 *   tick into one write) is parsed back into its commands (RESP), and each command is told by its key:
 *   oidc-provider's models (`oidc:`, through the adapter contract: the floor the service cannot go below
 *   without replacing the provider's models), the rate limits' counters (`rl:`), timers (the webhook and
 *   External pollers' `webhooks:`, `external:expiring`, and the status list pointer's 10 s cache), or the
 *   service's own records (every other key);
 * - a write holding the provider's and the service's commands is "shared"; one holding neither is the
 *   rate limits' or the timers' (what varies with timing: leases per window, polls per second);
 * - each figure is judged over the repeats: counts of the provider's and the service's are exact, judged
 *   against the recorded footprint (bench/results/redis-footprint.json) with no margin; bytes vary with
 *   timing (TTLs left, counters, the allocator's rounding) and are judged with a margin of 5 % over the
 *   recorded figure, the flow's own bytes 60 s later against its stated 3 KB; the rate limits', the
 *   timers' and the totals that hold them are shown with their interval, not judged.
 */
import { judge, median, medianInterval, type Interval, type Verdict } from './verdicts.js';

export type Origin = 'provider' | 'service' | 'rateLimits' | 'background';
export type WriteClass = Origin | 'shared' | 'other';
export const WRITE_CLASSES: WriteClass[] = ['provider', 'service', 'shared', 'rateLimits', 'background', 'other'];

/** The commands of one write (RESP arrays of bulk strings), each as its arguments; what does not parse ends the list. */
export function parseCommands(chunk: Buffer | string): string[][] {
  const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
  const out: string[][] = [];
  let i = 0;
  const line = (): string | undefined => {
    const end = buf.indexOf('\r\n', i, 'latin1');
    if (end < 0) return undefined;
    const s = buf.toString('latin1', i, end);
    i = end + 2;
    return s;
  };
  while (i < buf.length) {
    const head = line();
    if (!head?.startsWith('*')) break;
    const n = Number(head.slice(1));
    const args: string[] = [];
    for (let a = 0; a < n; a++) {
      const len = line();
      if (!len?.startsWith('$')) return out;
      const l = Number(len.slice(1));
      args.push(buf.toString('latin1', i, i + l));
      i += l + 2;
    }
    out.push(args);
  }
  return out;
}

/**
 * The status list pointer (src/status/registry.ts): an instance reads it again when its 10 s cache ends,
 * so how often depends on the time the flows take, not on the flow: a timer's, like the pollers'.
 */
const STATUS_POINTER = /^status:[^:{]+:current$/;

/** Whose a command is, by its first key under the prefix; null for a command with no key (PING, SCRIPT LOAD). */
export function originOf(command: string[], prefix: string): Origin | null {
  const key = command.slice(1).find((a) => a.startsWith(prefix));
  if (key === undefined) return null;
  const k = key.slice(prefix.length);
  if (k.startsWith('oidc:')) return 'provider';
  if (k.startsWith('rl:')) return 'rateLimits';
  if (k.startsWith('webhooks:') || k.startsWith('external:expiring') || STATUS_POINTER.test(k)) return 'background';
  return 'service';
}

/** One write's class and its commands by origin. */
export function classifyWrite(
  commands: string[][],
  prefix: string,
): { write: WriteClass; commands: Record<Origin | 'other', number> } {
  const counts = { provider: 0, service: 0, rateLimits: 0, background: 0, other: 0 };
  for (const c of commands) counts[originOf(c, prefix) ?? 'other']++;
  const write: WriteClass =
    counts.provider && counts.service
      ? 'shared'
      : counts.provider
        ? 'provider'
        : counts.service
          ? 'service'
          : counts.rateLimits
            ? 'rateLimits'
            : counts.background
              ? 'background'
              : 'other';
  return { write, commands: counts };
}

const zero = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/** Counts the writes of a connection, by class and by the HTTP request in flight (flows run one at a time). */
export class RoundTrips {
  readonly byRequest = new Map<string, Record<WriteClass, number>>();
  readonly writes = zero(WRITE_CLASSES);
  readonly commands = zero(['provider', 'service', 'rateLimits', 'background', 'other'] as const);
  request = '(between requests)';
  constructor(readonly prefix: string) {}

  onWrite(chunk: unknown): void {
    const { write, commands } = classifyWrite(
      Buffer.isBuffer(chunk) || typeof chunk === 'string' ? parseCommands(chunk) : [],
      this.prefix,
    );
    this.writes[write]++;
    for (const [k, n] of Object.entries(commands)) this.commands[k as keyof typeof commands] += n;
    const r = this.byRequest.get(this.request) ?? zero(WRITE_CLASSES);
    r[write]++;
    this.byRequest.set(this.request, r);
  }

  /** A copy of the counts so far (to subtract from later ones). */
  snapshot() {
    return {
      writes: { ...this.writes },
      commands: { ...this.commands },
      byRequest: new Map([...this.byRequest].map(([k, v]) => [k, { ...v }])),
    };
  }
}

export type Figure = {
  key: string;
  label: string;
  /** exact: counts judged against the recorded figure, no margin; bytes: 5 % over it (or `budget`); shown: not judged */
  kind: 'exact' | 'bytes' | 'shown';
  /** a stated budget instead of the recorded figure */
  budget?: number;
};

/** The flow's own records 60 s after its token response: at most 3 KB (test/integration/flow-footprint.test.ts). */
export const OWN_BYTES_LATER_BUDGET = 3 * 1024;
/** How far bytes may move over the recorded figure with timing alone. */
export const BYTES_MARGIN = 0.05;

export const FIGURES: Figure[] = [
  { key: 'roundTrips.provider', label: "round trips: oidc-provider's models only (the floor)", kind: 'exact' },
  { key: 'roundTrips.service', label: "round trips: the service's own records only", kind: 'exact' },
  { key: 'roundTrips.shared', label: 'round trips: both in one write', kind: 'exact' },
  { key: 'roundTrips.rateLimits', label: "round trips: the rate limits' counters only", kind: 'shown' },
  { key: 'roundTrips.background', label: 'round trips: timers only (pollers, status list pointer)', kind: 'shown' },
  { key: 'roundTrips.total', label: 'round trips in all (writes of the connection)', kind: 'shown' },
  { key: 'commandsSent.provider', label: "commands sent: oidc-provider's models", kind: 'exact' },
  { key: 'commandsSent.service', label: "commands sent: the service's own records", kind: 'exact' },
  { key: 'commandsSent.rateLimits', label: 'commands sent: rate limits', kind: 'shown' },
  { key: 'commandsSent.background', label: 'commands sent: timers', kind: 'shown' },
  { key: 'commandsSent.total', label: 'commands sent in all', kind: 'shown' },
  { key: 'commandsExecuted', label: "commands executed (INFO commandstats, scripts' included)", kind: 'shown' },
  { key: 'bytes.pending', label: 'bytes stored after PAR + authorise (pending)', kind: 'bytes' },
  { key: 'bytes.completed', label: 'bytes stored right after the token response', kind: 'bytes' },
  { key: 'bytes.later', label: 'bytes still stored 60 s later', kind: 'bytes' },
  {
    key: 'bytes.laterOwn',
    label: "bytes still stored 60 s later, the flow's own",
    kind: 'bytes',
    budget: OWN_BYTES_LATER_BUDGET,
  },
  { key: 'byteSeconds', label: 'bytes x seconds until the completed flow expires', kind: 'bytes' },
  { key: 'usedMemory', label: 'used_memory delta per completed flow', kind: 'shown' },
];

export interface Judged {
  median: number;
  interval: Interval | null;
  budget: number | null;
  verdict: Verdict | null;
  /** why there is no verdict */
  note?: string;
}

/** A figure's samples (one per repeat, per flow) judged against its budget. */
export function judgeFigure(samples: number[], figure: Pick<Figure, 'kind' | 'budget'>, recorded?: number): Judged {
  const interval = medianInterval([samples]);
  const m = median(samples);
  if (figure.kind === 'shown') return { median: m, interval, budget: null, verdict: null, note: 'varies with timing' };
  const budget =
    figure.budget ??
    (recorded === undefined ? undefined : figure.kind === 'bytes' ? recorded * (1 + BYTES_MARGIN) : recorded);
  if (budget === undefined)
    return { median: m, interval, budget: null, verdict: null, note: 'no recorded footprint to compare with' };
  return { median: m, interval, budget, verdict: judge(interval, { atMost: budget + 1e-9 }) };
}
