/**
 * The flows the demo relying party starts: the interfaces it speaks, what it keeps of a flow in the store
 * between the start and its end (the callback, or the webhook of an External Client flow), and for how long.
 */
import type { JWTPayload } from 'jose';
import { discoveryDocument } from '../oidc/discovery.js';
import type { versionProfiles } from '../oidc/versions.js';

export type Mode = 'v2-par' | 'v2' | 'v1-par' | 'v1';
export const MODES = ['v2-par', 'v2', 'v1-par', 'v1'] as const;
/** the form's mode values for an External Client flow: `v2-par-external`, `v2-external` */
export const EXTERNAL_SUFFIX = '-external';

export interface DemoState {
  mode: Mode;
  verifier?: string;
  nonce: string;
  clientId: string;
  /** an External Client flow: the holder's prompt, and the request_uri its continuation names (PAR) */
  external?: { promptUrl: string; requestUri?: string };
}

/** What the demo's webhook receiver made of an External Client flow, for the waiting page. */
export type Outcome =
  | { status: 'continuing' }
  | { status: 'completed'; claims: JWTPayload; log: string[] }
  | { status: 'failed'; title: string; details: unknown; log: string[] };

/** the demo's `state`: 128 random bits, base64url */
export const STATE = /^[A-Za-z0-9_-]{22}$/;
/** seconds a browser-returning flow's record lives (it ends at the callback) */
export const PENDING_TTL = 600;
/**
 * An External flow's records outlive any end it can have: the prompt may open while the 5-minute hint
 * lasts, the wallet step then lasts an offer's lifetime, a redeemed offer may still end up to 5 minutes
 * later (D13), and the webhook may come on a retry.
 */
export const EXTERNAL_TTL = 3600;

export const stateKey = (state: string) => `demo:${state}`;
export const outcomeKey = (state: string) => `demo:${state}:outcome`;

export type Profiles = ReturnType<typeof versionProfiles>;

/** The profile a mode speaks: Version 1 or 2. */
export const profileOf = (profiles: Profiles, mode: Mode) => (mode.startsWith('v1') ? profiles.v1 : profiles.v2);

/** The service's endpoints for a mode, as its discovery document names them. */
export const endpointsOf = (profiles: Profiles, baseUrl: string, mode: Mode) =>
  discoveryDocument(profileOf(profiles, mode), baseUrl, mode === 'v1' ? 'root' : 'par') as Record<string, string>;
