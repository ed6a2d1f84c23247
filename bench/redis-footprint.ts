/**
 * Redis footprint of an issuance flow (D14): round trips and commands per completed flow, bytes stored per
 * pending and per completed flow, on a dedicated redis-server (started here on a free loopback port,
 * no persistence, killed at the end) with one service instance.
 *
 *   npx tsx bench/redis-footprint.ts [--flows N] [--repeat R]   N flows (default 20), R times (default 5): each figure's
 *                                                       median over the repeats, its interval and its verdict against
 *                                                       the recorded footprint (bench/results/redis-footprint.json)
 *   --record                                            afterwards, records this footprint as the one to compare with
 *   npx tsx bench/redis-footprint.ts --trace            one flow: every HTTP request with the store operations it caused
 *   --flow verification                                 a verification flow instead (the wallet presents an EmployeeBadge
 *                                                       it received before the run)
 *   --flow identity                                     an identity flow instead (scope VerifiedIdentity: the wallet presents
 *                                                       a PID of the bench PID issuer, made before the run as identity_flow's)
 *
 * A flow: PAR, authorise (the holder's browser on the prompt page) = "pending"; then the dev wallet's
 * token and credential requests, the page's last status poll and its return to the provider, and the
 * relying party's token exchange = "completed". The flows run one after the other, so every Redis command in a phase belongs to it.
 *
 * Measured:
 *  - commands: `INFO commandstats` deltas, total calls, minus the bench's own INFO/SCAN/MEMORY calls;
 *    this counts the commands run inside the store's Lua scripts too;
 *  - client commands: the same minus INCR, EXPIRE, SADD and TTL, which the store (src/store/redis.ts)
 *    only ever runs inside its scripts (its own commands are GET, MGET, SET, GETDEL, DEL, SMEMBERS,
 *    EVALSHA/EVAL and PING);
 *  - round trips: writes of the service's Redis connection. Commands a request issues together go out
 *    in one write (ioredis auto-pipelining) and are answered together;
 *  - bytes: `MEMORY USAGE` summed over the run's keys (SCAN on the prefix), per flow, after the
 *    pending phase and after the token exchange (what stays until the TTLs expire); of the latter, what
 *    is still there 60 s later (keys with a longer TTL left), in all and without what must outlive the
 *    flow (status list entries, rate-limit counters, replay markers); and the `INFO memory` used_memory
 *    delta per flow.
 *  - whose each round trip is: every write is parsed back into its commands and told by its keys
 *    (bench/lib/footprint.ts): oidc-provider's models (the floor below which the service cannot go
 *    without replacing them), the service's own records, both in one write, the rate limits' counters, the
 *    pollers' timers; by the HTTP request in flight, so each request's split is printed too.
 * Verdicts (bench/lib/footprint.ts): the provider's and the service's round trips and commands are exact and
 * compared exactly with the recorded footprint; bytes vary with timing and get 5 % over it (the flow's own
 * bytes 60 s later: its 3 KB); the rate limits' and timers' figures are shown, not judged. Nothing fails.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import { startRedis } from '../test/helpers/redisServer.js';
import { startTestService, testConfig, SECRETS, REDIRECT } from '../test/helpers/service.js';
import { makeHint, pkcePair, postForm, Browser } from '../test/helpers/rp.js';
import { newWallet, requestFromPage } from '../test/helpers/flows.js';
import { createRedisStore } from '../src/store/redis.js';
import { IDENTITY_SCOPE, LIFETIMES, oursConfig, readPidIssuerKey, VERIFY_SCOPE } from './lib/config.js';
import { pidCredentials } from './lib/flows.js';
import { makeKeys } from './lib/setup.js';
import { FIGURES, RoundTrips, WRITE_CLASSES, judgeFigure, type Judged, type WriteClass } from './lib/footprint.js';

const { values } = parseArgs({
  options: {
    flows: { type: 'string', default: '20' },
    repeat: { type: 'string', default: '5' },
    record: { type: 'boolean', default: false },
    trace: { type: 'boolean', default: false },
    flow: { type: 'string', default: 'issuance' },
  },
});
/** The presentation flows' scopes: both run as a verification does, only the credential presented differs. */
const PRESENTATION_SCOPES: Record<string, string> = { verification: VERIFY_SCOPE, identity: IDENTITY_SCOPE };
const PRESENTATION = values.flow !== 'issuance';
const IDENTITY = values.flow === 'identity';
if (!['issuance', 'verification', 'identity'].includes(values.flow!))
  throw new Error('--flow is issuance, verification or identity');
const N = Math.max(1, Math.min(1_000, Number(values.flows) || 20));
const REPEAT = Math.max(1, Math.min(20, Number(values.repeat) || 5));
const PREFIX = 'bench:';
const CLIENT = { id: 'issuer-pkce', secret: SECRETS.pkceIssuer };
const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
const PIN = '4321';
const OWN = new Set(['info', 'scan', 'memory', 'client', 'command', 'hello', 'flushdb']);

const redis = await startRedis();
const admin = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
await admin.connect();
const spec = { url: redis.url, keyPrefix: PREFIX };
const store = await createRedisStore(spec);
/**
 * identity: the bench's keys (makeKeys: its PID issuer's key among them) and its identity block (oursConfig:
 * the claims asked for, the trusted PID issuer), the test client allowed VerifiedIdentity. Only there: the
 * other flows run on the test configuration as before.
 */
const keyDir = IDENTITY ? await makeKeys() : undefined;
const identity =
  keyDir &&
  oursConfig({
    kind: 'ours',
    store: 'redis',
    redisUrl: redis.url,
    redisPrefix: PREFIX,
    keyDir,
    lifetimes: LIFETIMES,
    port: 0,
    webhookPort: 0,
  }).identity;
const svc = await startTestService(
  identity
    ? {
        store: spec,
        identity,
        clients: (testConfig(0).clients as { clientId: string; scopes: string[] }[]).map((c) =>
          c.clientId === CLIENT.id ? { ...c, scopes: [...c.scopes, 'VerifiedIdentity'] } : c,
        ),
      }
    : { store: spec },
  { store },
);

/**
 * Writes of the service's Redis connection: a request's round trips. Commands issued together (the
 * same tick, ioredis auto-pipelining) go out in one write and come back together, so this is what a
 * flow waits on; commands counts the work Redis does.
 */
let writes = 0;
const roundTrips = new RoundTrips(PREFIX);
{
  const socket = (store.client as Redis).stream;
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((...args: unknown[]) => {
    writes++;
    roundTrips.onWrite(args[0]);
    return write(...args);
  }) as typeof socket.write;
}

/** A key or path with its ids replaced by * (long random tokens, not CamelCase model names). */
const family = (key: string) =>
  key
    .replace(/urn:ietf:params:oauth:request_uri:[^:]+/, 'urn:…:request_uri:*')
    .replace(/\{[^}]*\}/g, '{*}')
    .split(':')
    .map((part) => (/^[A-Za-z0-9_-]{16,}$/.test(part) && !/^(?:[A-Z][a-z]+)+$/.test(part) ? '*' : part))
    .join(':');

/**
 * --trace: the store's operations, each under the HTTP request that caused it. The flow's requests go
 * one after the other (fetch is awaited), so every operation between two requests belongs to the first.
 */
const trace: {
  request: string;
  ops: string[];
  writesBefore: number;
  writes?: number;
  classesBefore: Record<WriteClass, number>;
  classes?: Record<WriteClass, number>;
}[] = [];
/** The round trips by class since `before` (bench/lib/footprint.ts). */
const classesSince = (before: Record<WriteClass, number>) =>
  Object.fromEntries(WRITE_CLASSES.map((c) => [c, roundTrips.writes[c] - before[c]])) as Record<WriteClass, number>;
const CLASS_NAMES: Record<WriteClass, string> = {
  provider: 'oidc-provider',
  service: 'service',
  shared: 'both',
  rateLimits: 'rate limits',
  background: 'timers',
  other: 'no key',
};
const split = (c: Record<WriteClass, number>, digits = 0) =>
  WRITE_CLASSES.filter((k) => c[k] || k === 'provider' || k === 'service')
    .map((k) => `${CLASS_NAMES[k]} ${c[k].toFixed(digits)}`)
    .join(', ');
let tracing = false;
if (values.trace) {
  const target = store as unknown as Record<string, (...args: unknown[]) => unknown>;
  // every store operation the class has (not ping and close), whatever the Store interface holds today
  const methods = Object.getOwnPropertyNames(Object.getPrototypeOf(store)).filter(
    (m) => !['constructor', 'ping', 'close'].includes(m) && typeof target[m] === 'function',
  );
  for (const method of methods) {
    const original = target[method].bind(store);
    target[method] = (...args: unknown[]) => {
      if (tracing)
        trace.at(-1)?.ops.push(
          `${method} ${args
            .filter((a) => typeof a === 'string')
            .slice(0, method === 'delete' ? 9 : 1)
            .map((k) => family(k as string))
            .join(' ')}`,
        );
      return original(...args);
    };
  }
}

/**
 * Every HTTP request the flows send (fetch is awaited, one flow at a time): the round trips are counted
 * under the request in flight, and --trace lists the store operations under it.
 */
{
  const fetch = globalThis.fetch;
  globalThis.fetch = (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const path = url.pathname
      .split('/')
      .map((part) => (/^[A-Za-z0-9_-]{16,}$/.test(part) ? '*' : part))
      .join('/');
    const request = `${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${path}`;
    roundTrips.request = request;
    if (tracing) {
      const last = trace.at(-1);
      if (last) {
        last.writes = writes - last.writesBefore;
        last.classes = classesSince(last.classesBefore);
      }
      trace.push({ request, ops: [], writesBefore: writes, classesBefore: { ...roundTrips.writes } });
    }
    return fetch(input, init);
  };
}

/** How long after the token response what a completed flow keeps is measured (issue 37). */
const LATER_SECONDS = 60;
/**
 * What must outlive a flow: its credential's status list entry (and its SerialNumber's record, the
 * admin API's way to it), the rate limits' counters, and the replay markers of its single-use artefacts.
 */
const OUTLIVING = /^status:|^rl:|^hint:|:consumed$|:claimed:/;

/** Commands run inside the store's Lua scripts only (see the header). */
const INSIDE_LUA = new Set(['incr', 'expire', 'sadd', 'ttl']);

/** Calls per command since the server started, without the bench's own. */
async function commandCalls(): Promise<Map<string, number>> {
  const info = await admin.info('commandstats');
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (!OWN.has(m[1].split('|')[0])) calls.set(m[1], Number(m[2]));
  }
  return calls;
}

function delta(
  a: Map<string, number>,
  b: Map<string, number>,
): { total: number; roundTrips: number; byCommand: Map<string, number> } {
  const byCommand = new Map<string, number>();
  let total = 0;
  let roundTrips = 0;
  for (const [cmd, n] of b) {
    const d = n - (a.get(cmd) ?? 0);
    if (!d) continue;
    byCommand.set(cmd, d);
    total += d;
    if (!INSIDE_LUA.has(cmd)) roundTrips += d;
  }
  return { total, roundTrips, byCommand };
}

async function usedMemory(): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await admin.info('memory'))![1]);
}

/** The run's keys (SCAN, bounded) with their MEMORY USAGE, grouped by family (ids replaced by *). */
async function keyFootprint(): Promise<{
  keys: number;
  bytes: number;
  /** what is still stored 60 s later (keys with more than 60 s to live, or none) */
  later: number;
  /** the same, without the status list entries and the replay markers that must outlive the flow */
  laterFlow: number;
  /** bytes × seconds left to live, without the status list entries (they live as long as the credential) */
  byteSeconds: number;
  families: Map<string, { keys: number; bytes: number; ttl: number }>;
}> {
  const families = new Map<string, { keys: number; bytes: number; ttl: number }>();
  let cursor = '0';
  let keys = 0;
  let bytes = 0;
  let later = 0;
  let laterFlow = 0;
  let byteSeconds = 0;
  for (let i = 0; i < 100_000; i++) {
    const [next, found] = await admin.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', 1000);
    for (const key of found) {
      const usage = Number(await admin.memory('USAGE', key, 'SAMPLES', 0)) || 0;
      keys++;
      bytes += usage;
      // ids (long random tokens, not CamelCase model names) become *
      const family = key
        .slice(PREFIX.length)
        .replace(/urn:ietf:params:oauth:request_uri:/, 'urn:…:request_uri:')
        .replace(/\{[^}]*\}/g, '{*}')
        .split(':')
        .map((part) => (/^[A-Za-z0-9_-]{16,}$/.test(part) && !/^(?:[A-Z][a-z]+)+$/.test(part) ? '*' : part))
        .join(':');
      const f = families.get(family) ?? { keys: 0, bytes: 0, ttl: 0 };
      const ttl = await admin.ttl(key);
      f.keys++;
      f.bytes += usage;
      f.ttl = Math.max(f.ttl, ttl);
      families.set(family, f);
      if (ttl > 0 && !family.startsWith('status:')) byteSeconds += usage * ttl;
      if (ttl > LATER_SECONDS || ttl === -1) {
        later += usage;
        if (!OUTLIVING.test(family)) laterFlow += usage;
      }
    }
    cursor = next;
    if (cursor === '0') break;
  }
  return { keys, bytes, later, laterFlow, byteSeconds, families };
}

interface Pending {
  browser: Browser;
  interactionUrl: string;
  offer: string;
  verifier: string;
}

async function pendingFlow(): Promise<Pending> {
  return PRESENTATION ? pendingPresentation() : pendingIssuance();
}

/** PAR (no hint) for the flow's scope, authorise: the prompt page shows the presentation request. */
async function pendingPresentation(): Promise<Pending> {
  const { verifier, challenge } = pkcePair();
  const par = await postForm(`${svc.url}/v2.0/oidc/par`, {
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: PRESENTATION_SCOPES[values.flow!],
    state: 'bench',
    nonce: 'bench',
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  if (par.status !== 201) throw new Error(`PAR: ${par.status} ${JSON.stringify(par.body)}`);
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(
    `${svc.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, request_uri: par.body.request_uri })}`,
  );
  if (!prompt.html) throw new Error(`authorise: arrived at ${prompt.final}`);
  return { browser, interactionUrl: prompt.final, offer: requestFromPage(prompt.html), verifier };
}

async function pendingIssuance(): Promise<Pending> {
  const base = svc.url;
  const { verifier, challenge } = pkcePair();
  const hint = await makeHint({
    clientId: CLIENT.id,
    secret: CLIENT.secret,
    audience: base,
    claims: { ...attributes, PinCode: PIN },
  });
  const par = await postForm(`${base}/v2.0/oidc/par`, {
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid issue.EmployeeBadge',
    state: 'bench',
    nonce: 'bench',
    id_token_hint: hint,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  if (par.status !== 201) throw new Error(`PAR: ${par.status} ${JSON.stringify(par.body)}`);
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(
    `${base}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, request_uri: par.body.request_uri })}`,
  );
  if (!prompt.html) throw new Error(`authorise: arrived at ${prompt.final}`);
  const m = /href="(openid-credential-offer[^"]+)"/.exec(prompt.html);
  if (!m) throw new Error('no offer on the prompt page');
  return {
    browser,
    interactionUrl: prompt.final,
    offer: m[1].replaceAll('&amp;', '&').replaceAll('&quot;', '"').replaceAll('&#39;', "'"),
    verifier,
  };
}

async function completeFlow(p: Pending): Promise<void> {
  if (PRESENTATION) {
    const presented = await holder!.present(p.offer);
    if (presented.status >= 400) throw new Error(`presentation: ${presented.status} ${JSON.stringify(presented.body)}`);
  } else await (await newWallet()).receive(p.offer, { pin: PIN });
  // as the page does: its status poll answers done with the provider's resume URL, and it goes there
  const status = (await (await p.browser.get(`${p.interactionUrl}/status`)).json()) as {
    status: string;
    next?: string;
  };
  if (status.status !== 'done' || !status.next) throw new Error(`status after the wallet: ${JSON.stringify(status)}`);
  const done = await p.browser.follow(status.next);
  if (done.html !== undefined) throw new Error(`resume: ${done.res?.status} at ${done.final}`);
  const code = new URL(done.final).searchParams.get('code');
  const token = await postForm(`${svc.url}/v2.0/oidc/token`, {
    grant_type: 'authorization_code',
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    code: code ?? '',
    redirect_uri: REDIRECT,
    code_verifier: p.verifier,
  });
  if (token.status !== 200) throw new Error(`token exchange: ${token.status} ${JSON.stringify(token.body)}`);
  // as identity_flow checks: the ID token carries the PID's claims, so the flow measured is the identity flow
  if (IDENTITY) {
    const claims = JSON.parse(
      Buffer.from(String(token.body.id_token).split('.')[1], 'base64url').toString('utf8'),
    ) as Record<string, unknown>;
    if (claims.given_name !== 'Ada' || claims.birthdate !== '1815-12-10')
      throw new Error(`the ID token does not carry the PID's claims: ${JSON.stringify(claims).slice(0, 300)}`);
  }
}

/**
 * The wallet that presents in verification and identity flows: it holds one EmployeeBadge, issued before
 * the run, or one PID of the bench PID issuer.
 */
const holder = PRESENTATION ? await newWallet() : undefined;
if (keyDir) {
  // the PID as identity_flow makes it (pidCredentials), kept in the dev wallet with the key it is bound to
  const [pid] = await pidCredentials(readPidIssuerKey(keyDir).privateJwk, 1);
  await holder!.import(pid.credential, pid.holderKey);
} else if (holder) await holder.receive((await pendingIssuance()).offer, { pin: PIN });

if (values.trace) {
  try {
    await completeFlow(await pendingFlow()); // warm-up
    tracing = true;
    await completeFlow(await pendingFlow());
    tracing = false;
    const last = trace.at(-1);
    if (last) {
      last.writes = writes - last.writesBefore;
      last.classes = classesSince(last.classesBefore);
    }
    let total = 0;
    let trips = 0;
    const byClass = Object.fromEntries(WRITE_CLASSES.map((c) => [c, 0])) as Record<WriteClass, number>;
    for (const t of trace) {
      total += t.ops.length;
      trips += t.writes ?? 0;
      for (const c of WRITE_CLASSES) byClass[c] += t.classes?.[c] ?? 0;
      console.log(
        `${t.request}  (${t.ops.length} operations, ${t.writes ?? 0} round trips: ${t.classes ? split(t.classes) : '?'})`,
      );
      for (const op of t.ops) console.log(`    ${op}`);
    }
    console.log(
      `\n${trace.length} HTTP requests, ${total} store operations (a Lua script or one command each), ${trips} round trips: ${split(byClass)}`,
    );
  } finally {
    admin.disconnect();
    await svc.stop();
    await redis.destroy();
  }
  process.exit(0);
}

/** One repeat's figures per flow (the keys of FIGURES), and its round trips per flow by request and class. */
interface Sample {
  figures: Record<string, number>;
  perRequest: Map<string, Record<WriteClass, number>>;
}

/** The recorded footprint each run is judged against (--record writes it), one entry per flow kind. */
const RECORDED_FILE = join(process.cwd(), 'bench', 'results', 'redis-footprint.json');
interface Recorded {
  at: string;
  commit?: string;
  flows: number;
  repeats: number;
  figures: Record<string, number>;
  perRequest: Record<string, Partial<Record<WriteClass, number>>>;
}

/**
 * One repeat: a warm-up flow (first-use work: client lookups, key loading), a clean slate, then N flows
 * pending and N completed. `print`: the detailed tables (per phase, per key family, per command) of it.
 */
async function measureRepeat(print: boolean): Promise<Sample> {
  await completeFlow(await pendingFlow());
  await admin.flushdb(); // the dedicated Redis started above, never the machine's

  const mem0 = await usedMemory();
  const calls0 = await commandCalls();
  const writes0 = writes;
  const trips0 = roundTrips.snapshot();
  const pending: Pending[] = [];
  for (let i = 0; i < N; i++) pending.push(await pendingFlow());
  const writes1 = writes;
  const calls1 = await commandCalls();
  const mem1 = await usedMemory();
  const atPending = await keyFootprint();
  const calls1b = await commandCalls(); // keyFootprint's TTL calls are not the service's

  for (const p of pending) await completeFlow(p);
  const writes2 = writes;
  const trips2 = roundTrips.snapshot();
  roundTrips.request = '(between requests)';
  const calls2 = await commandCalls();
  const mem2 = await usedMemory();
  const atDone = await keyFootprint();

  const d1 = delta(calls0, calls1);
  const d2 = delta(calls1b, calls2);
  const d = { total: d1.total + d2.total, roundTrips: d1.roundTrips + d2.roundTrips, byCommand: new Map(d1.byCommand) };
  for (const [c, n] of d2.byCommand) d.byCommand.set(c, (d.byCommand.get(c) ?? 0) + n);
  const w = (c: WriteClass) => (trips2.writes[c] - trips0.writes[c]) / N;
  const c = (k: keyof typeof trips0.commands) => (trips2.commands[k] - trips0.commands[k]) / N;
  const figures: Record<string, number> = {
    'roundTrips.provider': w('provider'),
    'roundTrips.service': w('service'),
    'roundTrips.shared': w('shared'),
    'roundTrips.rateLimits': w('rateLimits'),
    'roundTrips.background': w('background'),
    'roundTrips.total': (writes2 - writes0) / N,
    'commandsSent.provider': c('provider'),
    'commandsSent.service': c('service'),
    'commandsSent.rateLimits': c('rateLimits'),
    'commandsSent.background': c('background'),
    'commandsSent.total': Object.keys(trips0.commands).reduce((a, k) => a + c(k as keyof typeof trips0.commands), 0),
    commandsExecuted: d.total / N,
    'bytes.pending': atPending.bytes / N,
    'bytes.completed': atDone.bytes / N,
    'bytes.later': atDone.later / N,
    'bytes.laterOwn': atDone.laterFlow / N,
    byteSeconds: atDone.byteSeconds / N,
    usedMemory: (mem2 - mem0) / N,
  };
  const perRequest = new Map<string, Record<WriteClass, number>>();
  for (const [request, counts] of trips2.byRequest) {
    const before = trips0.byRequest.get(request);
    perRequest.set(
      request,
      Object.fromEntries(WRITE_CLASSES.map((k) => [k, (counts[k] - (before?.[k] ?? 0)) / N])) as Record<
        WriteClass,
        number
      >,
    );
  }
  if (print) printDetails({ d1, d2, d, writes0, writes1, writes2, mem0, mem1, mem2, atPending, atDone });
  return { figures, perRequest };
}

function printDetails(m: {
  d1: ReturnType<typeof delta>;
  d2: ReturnType<typeof delta>;
  d: ReturnType<typeof delta>;
  writes0: number;
  writes1: number;
  writes2: number;
  mem0: number;
  mem1: number;
  mem2: number;
  atPending: Awaited<ReturnType<typeof keyFootprint>>;
  atDone: Awaited<ReturnType<typeof keyFootprint>>;
}): void {
  const { d1, d2, d, writes0, writes1, writes2, mem0, mem1, mem2, atPending, atDone } = m;
  const per = (n: number) => (n / N).toFixed(1);
  const rows: [string, string, string, string][] = [
    ['', 'PAR + authorise', 'wallet + token exchange', 'complete flow'],
    [
      'Redis round trips (writes of the connection)',
      per(writes1 - writes0),
      per(writes2 - writes1),
      per(writes2 - writes0),
    ],
    ['client commands sent', per(d1.roundTrips), per(d2.roundTrips), per(d.roundTrips)],
    ['Redis commands (INFO commandstats calls)', per(d1.total), per(d2.total), per(d.total)],
    ['keys stored after the phase', per(atPending.keys), per(atDone.keys), ''],
    ['bytes stored (MEMORY USAGE sum)', per(atPending.bytes), per(atDone.bytes), ''],
    [`bytes still stored ${LATER_SECONDS} s later (TTL left > ${LATER_SECONDS} s)`, '', per(atDone.later), ''],
    ["  of which the flow's own (no status entry, replay marker)", '', per(atDone.laterFlow), ''],
    ['byte-seconds until it expires (no status entry): memory per flow/s', '', per(atDone.byteSeconds), ''],
    ['used_memory delta since start', per(mem1 - mem0), per(mem2 - mem0), ''],
  ];
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((r) => r[c].length)));
  console.log(
    `\nRedis footprint per flow (${N} ${values.flow} flows, one instance, redis-server ${redis.port}; all values per flow; the first of ${REPEAT} repeats)\n`,
  );
  for (const r of rows)
    console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  '));

  const families = [...new Set([...atPending.families.keys(), ...atDone.families.keys()])].sort();
  const fRows: [string, string, string, string][] = [
    ['key family', 'pending: keys / bytes', 'completed: keys / bytes', 'TTL left (s, max)'],
  ];
  for (const f of families) {
    const a = atPending.families.get(f);
    const b = atDone.families.get(f);
    fRows.push([
      f,
      a ? `${per(a.keys)} / ${per(a.bytes)}` : '-',
      b ? `${per(b.keys)} / ${per(b.bytes)}` : '-',
      String((b ?? a)!.ttl),
    ]);
  }
  const fw = [0, 1, 2, 3].map((c) => Math.max(...fRows.map((r) => r[c].length)));
  console.log('\nper key family (per flow)\n');
  for (const r of fRows)
    console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(fw[c]) : cell.padStart(fw[c]))).join('  '));
  console.log(
    `\ncommands per completed flow: ${[...d.byCommand]
      .sort((a, b) => b[1] - a[1])
      .map(([c, n]) => `${c} ${per(n)}`)
      .join(', ')}\n`,
  );
}

const fmt = (x: number | null | undefined, digits = 1) =>
  x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits);
const verdictOf = (j: Judged) => (j.verdict === null ? `- (${j.note})` : j.verdict === 'missed' ? 'MISSED' : j.verdict);

function printTable(rows: string[][]): void {
  const w = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const r of rows)
    console.log(
      r.map((cell, c) => (c === 0 || c === r.length - 1 ? cell.padEnd(w[c]) : cell.padStart(w[c]))).join('  '),
    );
}

/** The repeats judged (bench/lib/footprint.ts), printed; with --record, written as the footprint to compare with. */
function judgeRepeats(samples: Sample[]): void {
  const all = existsSync(RECORDED_FILE)
    ? (JSON.parse(readFileSync(RECORDED_FILE, 'utf8')) as Record<string, Recorded>)
    : {};
  const recorded = all[values.flow!];
  console.log(
    `\nverdicts over ${REPEAT} repeats of ${N} ${values.flow} flows (per flow; 95 % = bootstrap interval of the median over the repeats), against ${recorded ? `the footprint recorded ${recorded.at.slice(0, 10)} at ${recorded.commit ?? '?'} (${RECORDED_FILE.replace(`${process.cwd()}/`, '')})` : 'no recorded footprint (--record writes one)'}\n`,
  );
  const rows = [['per flow', 'median', '95 %', 'recorded', 'budget', 'verdict']];
  const medians: Record<string, number> = {};
  for (const f of FIGURES) {
    const j = judgeFigure(
      samples.map((s) => s.figures[f.key]),
      f,
      recorded?.figures[f.key],
    );
    medians[f.key] = j.median;
    rows.push([
      f.label,
      fmt(j.median),
      j.interval ? `[${fmt(j.interval[0])}, ${fmt(j.interval[1])}]` : '-',
      fmt(recorded?.figures[f.key]),
      f.kind === 'shown' ? '' : `${f.budget !== undefined ? '' : f.kind === 'exact' ? '= ' : '+5 % '}${fmt(j.budget)}`,
      verdictOf(j),
    ]);
  }
  printTable(rows);

  // each request's round trips by class: the provider's are the floor, the service's are judged exactly
  const requests = [...new Set(samples.flatMap((s) => [...s.perRequest.keys()]))];
  const perRequest: Recorded['perRequest'] = {};
  const reqRows = [
    [
      'round trips per flow, by request',
      'oidc-provider',
      'service',
      'both',
      'rate limits',
      'timers',
      'service recorded',
      'verdict',
    ],
  ];
  for (const request of requests) {
    const of = (k: WriteClass) => samples.map((s) => s.perRequest.get(request)?.[k] ?? 0);
    const med = Object.fromEntries(
      WRITE_CLASSES.map((k) => [k, judgeFigure(of(k), { kind: 'shown' }).median]),
    ) as Record<WriteClass, number>;
    if (WRITE_CLASSES.every((k) => !med[k])) continue;
    perRequest[request] = med;
    const before = recorded?.perRequest[request];
    const j = judgeFigure(of('service'), { kind: 'exact' }, before ? (before.service ?? 0) : undefined);
    reqRows.push([
      request,
      fmt(med.provider, 2),
      fmt(med.service, 2),
      fmt(med.shared, 2),
      fmt(med.rateLimits, 2),
      fmt(med.background, 2),
      fmt(before?.service, 2),
      verdictOf(j),
    ]);
  }
  console.log('');
  printTable(reqRows);
  if (values.record) {
    let commit: string | undefined;
    try {
      commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      commit = undefined;
    }
    all[values.flow!] = {
      at: new Date().toISOString(),
      commit,
      flows: N,
      repeats: REPEAT,
      figures: medians,
      perRequest,
    };
    writeFileSync(RECORDED_FILE, `${JSON.stringify(all, null, 2)}\n`);
    console.log(`\nrecorded as the ${values.flow} footprint to compare with: ${RECORDED_FILE}`);
  }
}

try {
  const samples: Sample[] = [];
  for (let r = 0; r < REPEAT; r++) samples.push(await measureRepeat(r === 0));
  judgeRepeats(samples);
} finally {
  admin.disconnect();
  await svc.stop();
  await redis.destroy();
}
