/**
 * Redis footprint of an issuance flow (D14): round trips and commands per completed flow, bytes stored per
 * pending and per completed flow, on a dedicated redis-server (started here on a free loopback port,
 * no persistence, killed at the end) with one service instance.
 *
 *   npx tsx bench/redis-footprint.ts [--flows N]        (default 20)
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
 *  - client commands: the commands the service's Redis client sends (a Lua script is one, EVALSHA);
 *  - Redis CPU: `INFO cpu` (used_cpu_user + used_cpu_sys of the server's main thread and I/O), per flow;
 *    the bench's own INFO, SCAN and MEMORY calls between the phases are in it (a few ms per run);
 *  - round trips: writes of the service's Redis connection. Commands a request issues together go out
 *    in one write (ioredis auto-pipelining) and are answered together;
 *  - bytes: `MEMORY USAGE` summed over the run's keys (SCAN on the prefix), per flow, after the
 *    pending phase and after the token exchange (what stays until the TTLs expire); of the latter, what
 *    is still there 60 s later (keys with a longer TTL left), in all and without what must outlive the
 *    flow (status list entries, rate-limit counters, replay markers); and the `INFO memory` used_memory
 *    delta per flow.
 * No thresholds: this prints numbers.
 */
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

const { values } = parseArgs({
  options: {
    flows: { type: 'string', default: '20' },
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
/** Commands the service's Redis client sends (what `INFO commandstats` counts includes a script's own). */
let sent = 0;
{
  const client = store.client as Redis;
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((...args: Parameters<Redis['sendCommand']>) => {
    sent++;
    return send(...args);
  }) as Redis['sendCommand'];
  const socket = client.stream;
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((...args: unknown[]) => {
    writes++;
    return write(...args);
  }) as typeof socket.write;
}

/**
 * --trace: the store's operations, each under the HTTP request that caused it. The flow's requests go
 * one after the other (fetch is awaited), so every operation between two requests belongs to the first.
 */
const trace: { request: string; ops: string[]; writesBefore: number; writes?: number }[] = [];
let tracing = false;
if (values.trace) {
  const family = (key: string) =>
    key
      .replace(/urn:ietf:params:oauth:request_uri:[^:]+/, 'urn:…:request_uri:*')
      .replace(/\{[^}]*\}/g, '{*}')
      .split(':')
      .map((part) => (/^[A-Za-z0-9_-]{16,}$/.test(part) && !/^(?:[A-Z][a-z]+)+$/.test(part) ? '*' : part))
      .join(':');
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
  const fetch = globalThis.fetch;
  globalThis.fetch = (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (tracing) {
      const last = trace.at(-1);
      if (last) last.writes = writes - last.writesBefore;
      trace.push({
        request: `${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${family(url.pathname)}`,
        ops: [],
        writesBefore: writes,
      });
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

/** Calls per command since the server started, without the bench's own. */
async function commandCalls(): Promise<Map<string, number>> {
  const info = await admin.info('commandstats');
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    if (!OWN.has(m[1].split('|')[0])) calls.set(m[1], Number(m[2]));
  }
  return calls;
}

/** The Redis server's CPU time so far, µs (`INFO cpu`: user and system). */
async function redisCpu(): Promise<number> {
  const info = await admin.info('cpu');
  const seconds = (name: string) => Number(new RegExp(`^${name}:([\\d.]+)`, 'm').exec(info)?.[1] ?? 0);
  return Math.round((seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6);
}

function delta(a: Map<string, number>, b: Map<string, number>): { total: number; byCommand: Map<string, number> } {
  const byCommand = new Map<string, number>();
  let total = 0;
  for (const [cmd, n] of b) {
    const d = n - (a.get(cmd) ?? 0);
    if (!d) continue;
    byCommand.set(cmd, d);
    total += d;
  }
  return { total, byCommand };
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
    if (last) last.writes = writes - last.writesBefore;
    let total = 0;
    let roundTrips = 0;
    for (const t of trace) {
      total += t.ops.length;
      roundTrips += t.writes ?? 0;
      console.log(`${t.request}  (${t.ops.length} operations, ${t.writes ?? 0} round trips)`);
      for (const op of t.ops) console.log(`    ${op}`);
    }
    console.log(
      `\n${trace.length} HTTP requests, ${total} store operations (a Lua script or one command each), ${roundTrips} round trips`,
    );
  } finally {
    admin.disconnect();
    await svc.stop();
    await redis.destroy();
  }
  process.exit(0);
}

try {
  // one warm-up flow (first-use work: client lookups, key loading), then a clean slate
  await completeFlow(await pendingFlow());
  await admin.flushdb(); // the dedicated Redis started above, never the machine's

  const mem0 = await usedMemory();
  const calls0 = await commandCalls();
  const cpu0 = await redisCpu();
  const writes0 = writes;
  const sent0 = sent;
  const pending: Pending[] = [];
  for (let i = 0; i < N; i++) pending.push(await pendingFlow());
  const writes1 = writes;
  const sent1 = sent;
  const cpu1 = await redisCpu();
  const calls1 = await commandCalls();
  const mem1 = await usedMemory();
  const atPending = await keyFootprint();
  const calls1b = await commandCalls(); // keyFootprint's TTL calls are not the service's
  const cpu1b = await redisCpu(); // nor is its Redis CPU

  for (const p of pending) await completeFlow(p);
  const writes2 = writes;
  const sent2 = sent;
  const cpu2 = await redisCpu();
  const calls2 = await commandCalls();
  const mem2 = await usedMemory();
  const atDone = await keyFootprint();

  const per = (n: number) => (n / N).toFixed(1);
  const d1 = delta(calls0, calls1);
  const d2 = delta(calls1b, calls2);
  const d = { total: d1.total + d2.total, byCommand: new Map(d1.byCommand) };
  for (const [c, n] of d2.byCommand) d.byCommand.set(c, (d.byCommand.get(c) ?? 0) + n);
  const rows: [string, string, string, string][] = [
    ['', 'PAR + authorise', 'wallet + token exchange', 'complete flow'],
    [
      'Redis round trips (writes of the connection)',
      per(writes1 - writes0),
      per(writes2 - writes1),
      per(writes2 - writes0),
    ],
    ['client commands sent', per(sent1 - sent0), per(sent2 - sent1), per(sent2 - sent0)],
    ['Redis commands (INFO commandstats calls)', per(d1.total), per(d2.total), per(d.total)],
    ['Redis CPU, µs (INFO cpu)', per(cpu1 - cpu0), per(cpu2 - cpu1b), per(cpu1 - cpu0 + cpu2 - cpu1b)],
    ['keys stored after the phase', per(atPending.keys), per(atDone.keys), ''],
    ['bytes stored (MEMORY USAGE sum)', per(atPending.bytes), per(atDone.bytes), ''],
    [`bytes still stored ${LATER_SECONDS} s later (TTL left > ${LATER_SECONDS} s)`, '', per(atDone.later), ''],
    ["  of which the flow's own (no status entry, replay marker)", '', per(atDone.laterFlow), ''],
    ['byte-seconds until it expires (no status entry): memory per flow/s', '', per(atDone.byteSeconds), ''],
    ['used_memory delta since start', per(mem1 - mem0), per(mem2 - mem0), ''],
  ];
  const widths = [0, 1, 2, 3].map((c) => Math.max(...rows.map((r) => r[c].length)));
  console.log(
    `\nRedis footprint per flow (${N} ${values.flow} flows, one instance, redis-server ${redis.port}; all values per flow)\n`,
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
} finally {
  admin.disconnect();
  await svc.stop();
  await redis.destroy();
}
