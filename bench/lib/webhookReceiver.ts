/**
 * The relying party's webhook endpoint for external_issuance_flow, in the load process: a loopback HTTP
 * server on the port our server's config names (ServerSpec.webhookPort). Every delivery is verified with
 * the `standardwebhooks` package, as a relying party's receiver would, then handed to the flow waiting for
 * its `state`. Unlike test/helpers/webhookReceiver.ts it keeps nothing once handed over, so that its
 * memory and the load process's CPU stay flat over tens of thousands of flows.
 */
import { createServer, type Server } from 'node:http';
import { Webhook } from 'standardwebhooks';

/** The body our service signs (D13: flow.completed, flow.failed, flow.expired). */
export interface FlowEvent {
  type: string;
  timestamp: string;
  data: Record<string, string>;
}

export interface WebhookReceiver {
  /** The delivery for `state`, once it arrives; call it before the step that triggers it. */
  expect(state: string, timeoutMs?: number): Promise<FlowEvent>;
  /** deliveries that did not verify (answered 400), and verified ones no flow waited for */
  readonly counts: { verified: number; rejected: number; unexpected: number; firstRejection?: string };
  close(): Promise<void>;
}

export async function startWebhookReceiver(port: number, secret: string): Promise<WebhookReceiver> {
  const verifier = new Webhook(secret);
  const waiting = new Map<string, { resolve: (e: FlowEvent) => void; timer: NodeJS.Timeout }>();
  const counts: WebhookReceiver['counts'] = { verified: 0, rejected: 0, unexpected: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let event: FlowEvent;
      try {
        event = verifier.verify(
          Buffer.concat(chunks).toString('utf8'),
          req.headers as Record<string, string>,
        ) as FlowEvent;
      } catch (err) {
        counts.rejected++;
        counts.firstRejection ??= (err as Error).message;
        res.writeHead(400).end();
        return;
      }
      counts.verified++;
      // answered first: the service's delivery is done whatever the flow does next
      res.writeHead(204).end();
      const w = waiting.get(event.data?.state);
      if (!w) {
        counts.unexpected++;
        return;
      }
      waiting.delete(event.data.state);
      clearTimeout(w.timer);
      w.resolve(event);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    counts,
    expect(state, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(state);
          reject(
            new Error(
              `no webhook for the flow within ${timeoutMs} ms (verified ${counts.verified}, rejected ${counts.rejected}${counts.firstRejection ? `: ${counts.firstRejection}` : ''})`,
            ),
          );
        }, timeoutMs);
        waiting.set(state, { resolve, timer });
      });
    },
    async close() {
      for (const w of waiting.values()) clearTimeout(w.timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
