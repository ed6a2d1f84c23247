import { createHash } from 'node:crypto';
import type { Store } from '../store/types.js';
import { randomBase64url } from '../random.js';
import type { OfferRecord } from './offers.js';

/**
 * OpenID4VCI 1.0 §11: the wallet tells the issuer what became of a credential it received, naming the
 * `notification_id` of the Credential Response. The rules of the request are pure functions here; the
 * endpoint (access token, DPoP, HTTP) is src/issuance/notificationEndpoint.ts.
 */

export const NOTIFICATION_EVENTS = ['credential_accepted', 'credential_failure', 'credential_deleted'] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** What a notification id stands for: the credential's flow, and the access token it may be sent with. Never attribute values. */
export interface NotificationRecord {
  /** SHA-256 of the access token's identifier: only that token may notify for this id */
  token: string;
  stepId: string;
  clientId?: string;
  external?: boolean;
  credentialType: string;
  serialNumber: string;
  /** epoch seconds: the access token's expiry, after which the id is of no use and is gone */
  until: number;
}

/** A notification as it is reflected to the relying party and the audit line. */
export interface CredentialNotice {
  stepId: string;
  clientId?: string;
  external?: boolean;
  credentialType: string;
  serialNumber: string;
  event: NotificationEvent;
  /** the wallet's `event_description`, checked against the spec's characters */
  description?: string;
}

/** A Notification Error Response (§11.3): its code, HTTP status and a description naming the parameter. */
export class NotificationError extends Error {
  constructor(
    readonly error: 'invalid_notification_id' | 'invalid_notification_request' | 'invalid_token' | 'invalid_dpop_proof',
    description: string,
    readonly status: 400 | 401 = 400,
  ) {
    super(description);
    this.name = 'NotificationError';
  }
}

/** 256 random bits, base64url (as offer ids and ContinuationContexts). */
const NOTIFICATION_ID = /^[A-Za-z0-9_-]{43}$/;
/** §11.1 event_description: ASCII [%x20-21 / %x23-5B / %x5D-7E], no `"` or `\`. */
const EVENT_DESCRIPTION = /^[\x20-\x21\x23-\x5B\x5D-\x7E]*$/;
export const MAX_EVENT_DESCRIPTION = 500;

const sha256 = (v: string) => createHash('sha256').update(v).digest('base64url');
/** the id is a bearer value: only its hash names a key; the record and its event share one hash tag (D14) */
const recordKey = (id: string) => `wallet:{notification.${sha256(id)}}`;
const eventKey = (id: string) => `wallet:{notification.${sha256(id)}}:event`;

/** The hash an access token's identifier is kept as in a notification record. */
export const tokenHashOf = (accessTokenId: string) => sha256(accessTokenId);

/**
 * §11.1: the Notification Request's JSON object. `notification_id` and `event` are required, `event` one of
 * the three the spec defines; `event_description` optional, of the spec's characters. Members the spec
 * does not define are ignored.
 */
export function parseNotificationRequest(body: unknown): {
  notificationId: string;
  event: NotificationEvent;
  description?: string;
} {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new NotificationError('invalid_notification_request', 'the notification request must be a JSON object');
  const { notification_id: notificationId, event, event_description: description } = body as Record<string, unknown>;
  if (notificationId === undefined)
    throw new NotificationError('invalid_notification_request', 'notification_id is required');
  if (typeof notificationId !== 'string' || notificationId === '')
    throw new NotificationError('invalid_notification_request', 'notification_id must be a non-empty string');
  if (event === undefined) throw new NotificationError('invalid_notification_request', 'event is required');
  if (typeof event !== 'string' || !(NOTIFICATION_EVENTS as readonly string[]).includes(event)) {
    throw new NotificationError(
      'invalid_notification_request',
      `event must be one of ${NOTIFICATION_EVENTS.join(', ')}`,
    );
  }
  if (description !== undefined) {
    if (typeof description !== 'string' || !EVENT_DESCRIPTION.test(description)) {
      throw new NotificationError(
        'invalid_notification_request',
        'event_description must be a string of printable ASCII characters other than " and \\',
      );
    }
    if (description.length > MAX_EVENT_DESCRIPTION)
      throw new NotificationError(
        'invalid_notification_request',
        `event_description exceeds ${MAX_EVENT_DESCRIPTION} characters`,
      );
  }
  return { notificationId, event: event as NotificationEvent, ...(description ? { description } : {}) };
}

/**
 * Notification ids in the store. An id is minted with the credential, for the access token that fetched
 * it, and kept until that token expires: the request must carry the token, so the id is of no use after.
 * The first notification for an id decides what is reflected (`decide`); later ones change nothing.
 */
export class NotificationBook {
  constructor(private readonly store: Store) {}

  /** A new id for the credential of `offer`, fetched with the access token `accessTokenId` that expires at `tokenExpiresAt` (epoch seconds). */
  async create(offer: OfferRecord, accessTokenId: string, tokenExpiresAt: number): Promise<string> {
    const id = randomBase64url(32);
    const record: NotificationRecord = {
      token: tokenHashOf(accessTokenId),
      stepId: offer.stepId,
      ...(offer.clientId !== undefined ? { clientId: offer.clientId } : {}),
      ...(offer.external ? { external: true } : {}),
      credentialType: offer.credentialType,
      serialNumber: offer.serialNumber,
      until: tokenExpiresAt,
    };
    await this.store.set(recordKey(id), record, ttl(tokenExpiresAt));
    return id;
  }

  /** The id's record when it is one of ours and still kept; undefined otherwise. */
  async find(id: string): Promise<NotificationRecord | undefined> {
    return NOTIFICATION_ID.test(id) ? this.store.get<NotificationRecord>(recordKey(id)) : undefined;
  }

  /** Writes the id's event once: true when this call was the first notification for it. */
  decide(id: string, record: NotificationRecord, event: NotificationEvent): Promise<boolean> {
    return this.store.setIfAbsent(eventKey(id), event, ttl(record.until));
  }

  /** Takes a decision back (reflecting it failed), so that the wallet's retry reflects it. */
  async undecide(id: string): Promise<void> {
    await this.store.delete(eventKey(id));
  }
}

const ttl = (until: number) => Math.max(1, until - Math.floor(Date.now() / 1000));
