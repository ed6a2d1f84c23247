import { isIP } from 'node:net';
import { z } from 'zod';
import { absoluteUrl } from './schema/common.js';
import { credentialTypeSchema } from './schema/credentialTypes.js';
import { clientSchema } from './schema/clients.js';
import { identitySchema } from './schema/identity.js';
import { trustedIssuerSchema, verifierSchema } from './schema/verifier.js';
import { issuanceSchema, issuerSchema, statusListSchema, walletAttestationSchema } from './schema/issuer.js';
import {
  hintSchema,
  keysSchema,
  lifetimesSchema,
  metricsSchema,
  rateLimitsSchema,
  storeSchema,
  webhookDeliverySchema,
} from './schema/operations.js';
import { uiSchema } from './schema/ui.js';
import { versionsSchema } from './schema/versions.js';
import { outboundFetchSchema } from './schema/outbound.js';
import { checkConfig } from './schema/checks.js';

export { localizedText } from './schema/common.js';
export { attributeSchema, attributeTypes, credentialTypeSchema } from './schema/credentialTypes.js';
export { clientSchema, VC_ISSUER_CLAIM, webhookSchema } from './schema/clients.js';
export { identitySchema } from './schema/identity.js';
export { trustAnchorSchema, trustedIssuerSchema } from './schema/verifier.js';

/** The configuration's fields, each part's schema in ./schema/; `configSchema` adds the rules across parts. */
const configFields = z
  .object({
    baseUrl: absoluteUrl,
    port: z.number().int().min(0).max(65535).default(3000),
    host: z.string().default('0.0.0.0'),
    /**
     * Proxies (addresses or CIDRs, IPv4 or IPv6) whose `X-Forwarded-For` names the client; forwarded
     * headers from anyone else are dropped. URLs never come from request headers (always `baseUrl`).
     */
    trustedProxies: z
      .array(
        z.string().refine((v) => {
          const [address, prefix, ...rest] = v.split('/');
          const family = isIP(address);
          if (!family || rest.length) return false;
          return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
        }, 'must be an IP address or a CIDR such as 10.0.0.0/8 or fd00::/8'),
      )
      .default([]),
    store: storeSchema,
    keys: keysSchema,
    lifetimes: lifetimesSchema,
    hint: hintSchema,
    /** the longest `state` and `nonce` accepted: both are kept with the request and sent back */
    maxParameterLength: z.number().int().min(64).max(65536).default(512),
    pinAttempts: z.number().int().min(1).max(10).default(3),
    /** which interface versions are served, and where Version 2's issuer is (OIDC Discovery 1.0 §4) */
    versions: versionsSchema,
    /** D4: RFC 6749 error codes (invalid_client, 401) instead of the spec's, for certification runs */
    rfc6749Errors: z.boolean().default(false),
    walletPath: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .default('wallet'),
    credentialTypes: z.array(credentialTypeSchema).min(1),
    clients: z.array(clientSchema).min(1),
    trustedIssuers: z.array(trustedIssuerSchema).default([]),
    /** what fetches of keys, metadata and status lists may reach besides public addresses */
    outboundFetch: outboundFetchSchema,
    /** D12: the identity-verification flows (scopes VerifiedIdentity, VerifiedIdentity_Other) */
    identity: identitySchema.default({}),
    verifier: verifierSchema,
    issuer: issuerSchema,
    /** issuance defaults for every credential type: the batch size */
    issuance: issuanceSchema,
    statusList: statusListSchema,
    /** the operator API (`/admin/...`): off unless a token is set */
    admin: z
      .object({ token: z.string().min(32, 'must be at least 32 characters').optional() })
      .strict()
      .default({}),
    walletAttestation: walletAttestationSchema,
    webhooks: webhookDeliverySchema,
    metrics: metricsSchema,
    rateLimits: rateLimitsSchema,
    ui: uiSchema,
    /** serves /demo: a relying party for trying the flows in a browser (never in production) */
    demo: z.boolean().default(false),
    /**
     * with demo: true, serve it on a base URL that is not this machine (not loopback): the demo's secrets are
     * published and its PID issuer signs what it is asked, so this is refused unless said here
     */
    demoOnPublicUrl: z.boolean().default(false),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'silent']).default('info'),
  })
  .strict();

export const configSchema = configFields.superRefine(checkConfig);

export type Config = z.output<typeof configFields>;
export type RateLimitsConfig = Config['rateLimits'];
export type RateLimitEndpoint = keyof RateLimitsConfig;
export type MetricsConfig = Config['metrics'];
export type CredentialType = Config['credentialTypes'][number];
export type AttributeSpec = CredentialType['attributes'][string];
export type ClientConfig = Config['clients'][number];
export type TrustedIssuer = Config['trustedIssuers'][number];
export type VerifierConfig = Config['verifier'];
export type IssuerConfig = Config['issuer'];
export type PidFlowConfig = NonNullable<Config['identity']['VerifiedIdentity']>;
export type UpstreamIdvConfig = NonNullable<Config['identity']['VerifiedIdentity_Other']>;
