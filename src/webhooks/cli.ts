import { parseArgs } from 'node:util';
import { loadConfig } from '../config/load.js';
import { createStore } from '../store/create.js';
import { createLogger } from '../log.js';
import { WebhookQueue, webhookTargets, type Delivery } from './queue.js';

export const WEBHOOKS_USAGE = `Usage:
  npm run webhooks -- list [--failed] [--config FILE]    pending ones, and those that gave up in the last 7 days
                                                         (--failed: only those that gave up)
  npm run webhooks -- resend WEBHOOK-ID [--config FILE]  send a delivery again (same webhook-id and body)
The config file is the servers' (default config/demo.yaml, or $CONFIG); its store must be Redis.`;

/**
 * `npm run webhooks`: the operator's view of the webhook deliveries. It reads the store the
 * servers share and never starts the HTTP service; `resend` only queues, the running servers deliver.
 * Exit codes: 0 done, 1 cannot (memory store, unknown id, store unreachable), 2 usage.
 */
export async function webhooksCommand(args: string[], defaultConfig: string): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        config: { type: 'string', short: 'c' },
        failed: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n${WEBHOOKS_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(WEBHOOKS_USAGE);
    return 0;
  }
  const [sub, ...operands] = positionals;
  const problem = usageProblem(sub, operands, values.failed === true);
  if (problem) {
    console.error(`${problem}\n${WEBHOOKS_USAGE}`);
    return 2;
  }

  const loaded = await loadConfig(values.config ?? defaultConfig);
  const { config } = loaded;
  if (config.store === 'memory') {
    // an empty list here would read as "nothing failed"; the deliveries are in the server's own memory
    console.error(
      `${loaded.file}: store: memory. The memory store belongs to one process, so this command cannot see a running server's deliveries (nor queue one for it). It works with the Redis store the servers share.`,
    );
    return 1;
  }

  const store = await createStore(config.store);
  try {
    try {
      await store.ping();
    } catch {
      console.error(`${loaded.file}: cannot reach the store (Redis); nothing was listed or queued`);
      return 1;
    }
    const queue = new WebhookQueue(
      store,
      webhookTargets(config.clients),
      config.webhooks,
      createLogger(config.logLevel, process.stderr),
      { poll: false },
    );
    // resend() also polls at once, which would send the delivery from this short-lived process (and, if
    // it exits mid-attempt, hold it under a lease for up to 2 × timeout + 5 s); a closed queue never polls
    await queue.close();
    if (sub === 'list') return await list(queue, values.failed === true);
    return await resend(queue, operands[0]);
  } finally {
    await store.close();
  }
}

function usageProblem(sub: string | undefined, operands: string[], failed: boolean): string | undefined {
  if (sub === 'list') return operands.length ? `list takes no operands (got ${operands.join(' ')})` : undefined;
  if (sub === 'resend')
    return operands.length !== 1 ? 'resend takes one webhook-id' : failed ? '--failed is an option of list' : undefined;
  return sub ? `unknown webhooks command: ${sub}` : 'webhooks needs a command: list or resend';
}

async function list(queue: WebhookQueue, failed: boolean): Promise<number> {
  const deliveries = await queue.list({ failed });
  if (deliveries.length === 0) {
    console.log(
      failed ? 'no delivery gave up in the last 7 days' : 'no pending deliveries, and none gave up in the last 7 days',
    );
    return 0;
  }
  const rows = [
    ['WEBHOOK-ID', 'CLIENT', 'TYPE', 'STATE', 'ATTEMPTS', 'CREATED', 'LAST', 'NEXT'],
    ...deliveries.map(row),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const text = rows
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i])))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
  // one write, flushed before main exits the process (a long list into a pipe could be cut otherwise)
  await new Promise<void>((resolve, reject) =>
    process.stdout.write(`${text}\n`, (err) => (err ? reject(err) : resolve())),
  );
  return 0;
}

/** One delivery's line: never its body (it may hold a ContinuationContext, a bearer value). */
function row(d: Delivery): string[] {
  const last = d.last
    ? d.last.status !== undefined
      ? `HTTP ${d.last.status}`
      : shown(d.last.error ?? 'no answer')
    : '-';
  const next = d.state === 'pending' && d.nextAt !== undefined ? new Date(d.nextAt).toISOString() : '-';
  return [
    d.id,
    shown(d.clientId),
    shown(d.type),
    d.state,
    String(d.attempts),
    new Date(d.createdAt).toISOString(),
    last,
    next,
  ];
}

/**
 * Text from the store as it may be printed: control characters replaced, and a URL's user information
 * removed (fetch's error for a URL with credentials quotes the URL, password included).
 */
function shown(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]/g, '?').replace(/\/\/[^/\s@]*@/g, '//[redacted]@');
}

async function resend(queue: WebhookQueue, id: string): Promise<number> {
  const outcome = await queue.resend(id);
  if (outcome === 'unknown') {
    console.error(
      `no delivery with webhook-id ${shown(id)} in the store (deliveries that gave up are kept for 7 days)`,
    );
    return 1;
  }
  if (outcome === 'pending') {
    console.error(`${shown(id)} is still pending: it is being retried, nothing to resend`);
    return 1;
  }
  console.log(`${id}: queued with the same webhook-id and body; a running instance delivers it within a second`);
  return 0;
}
