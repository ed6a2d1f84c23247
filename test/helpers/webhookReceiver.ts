import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  /** verified with the standardwebhooks package against one of the receiver's secrets */
  payload: { type: string; timestamp: string; data: Record<string, string> };
  raw: string;
  at: number;
}

export type ReceiverAnswer = (hook: ReceivedWebhook, req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** A new Standard Webhooks secret: whsec_ and the base64 of 32 random bytes. */
export function webhookSecret(): string {
  return `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64')}`;
}

/**
 * A relying party's webhook endpoint on loopback: every delivery is verified with the `standardwebhooks`
 * package (a delivery that does not verify is answered 400 and recorded in `rejected`); `answer` decides
 * the answer to a verified one (default 204).
 */
export async function startWebhookReceiver(secret: string, answer?: ReceiverAnswer) {
  const received: ReceivedWebhook[] = [];
  const rejected: { headers: IncomingMessage['headers']; raw: string; reason: string }[] = [];
  const waiters: { test: (h: ReceivedWebhook) => boolean; resolve: (h: ReceivedWebhook) => void }[] = [];
  const verifier = new Webhook(secret);
  let respond = answer;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let payload: ReceivedWebhook['payload'];
    try {
      payload = verifier.verify(raw, req.headers as Record<string, string>) as ReceivedWebhook['payload'];
    } catch (err) {
      rejected.push({ headers: req.headers, raw, reason: (err as Error).message });
      res.statusCode = 400;
      res.end();
      return;
    }
    const hook: ReceivedWebhook = {
      id: String(req.headers['webhook-id']),
      timestamp: String(req.headers['webhook-timestamp']),
      signature: String(req.headers['webhook-signature']),
      payload,
      raw,
      at: Date.now(),
    };
    received.push(hook);
    if (respond) await respond(hook, req, res);
    else {
      res.statusCode = 204;
      res.end();
    }
    for (const w of [...waiters]) {
      if (w.test(hook)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(hook);
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    received,
    rejected,
    setAnswer(a: ReceiverAnswer | undefined) {
      respond = a;
    },
    /** the first delivery (already received or still to come) that passes `test` */
    next(test: (h: ReceivedWebhook) => boolean = () => true, timeoutMs = 15_000): Promise<ReceivedWebhook> {
      const found = received.find(test);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no matching webhook within ${timeoutMs} ms (received ${received.length})`)),
          timeoutMs,
        );
        waiters.push({ test, resolve: (h) => (clearTimeout(timer), resolve(h)) });
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
