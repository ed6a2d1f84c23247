import { Webhook } from 'standardwebhooks';

/** An External Client flow's event, as the service sends it (D13). */
export interface FlowEvent {
  type: string;
  timestamp?: string;
  data: {
    state?: unknown;
    client_id?: unknown;
    flow?: unknown;
    ContinuationContext?: unknown;
    error?: unknown;
    error_description?: unknown;
  };
}

/** Far more than an event's body: the receiver reads no further. */
export const WEBHOOK_BODY_LIMIT = 64 * 1024;

/**
 * Verifies a Standard Webhooks delivery (webhook-id, webhook-timestamp within 5 minutes, webhook-signature)
 * with the `standardwebhooks` package against any of the client's secrets (several during a rotation).
 * The event, or undefined when it does not verify or is not an event.
 */
export function verifyWebhook(
  raw: string,
  headers: Record<string, string>,
  secrets: readonly string[],
): FlowEvent | undefined {
  for (const secret of secrets) {
    let payload: unknown;
    try {
      payload = new Webhook(secret).verify(raw, headers);
    } catch {
      continue; // not this secret's signature, too old, or headers missing
    }
    const event = payload as Partial<FlowEvent> | null;
    if (event && typeof event.type === 'string' && event.data && typeof event.data === 'object')
      return event as FlowEvent;
    return undefined;
  }
  return undefined;
}
