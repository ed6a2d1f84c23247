import { z } from 'zod';
import { addressLimitSchema, DEFAULT_RATE_LIMITS, isoDuration, rateLimitSchema } from './common.js';

const redisSchema = z
  .object({
    url: z.string().optional(),
    sentinels: z.array(z.object({ host: z.string(), port: z.number().int() })).optional(),
    name: z.string().optional(),
    cluster: z.array(z.object({ host: z.string(), port: z.number().int() })).optional(),
    password: z.string().optional(),
    username: z.string().optional(),
    tls: z.union([z.boolean(), z.record(z.string(), z.unknown())]).optional(),
    keyPrefix: z.string().default('vc:'),
    /**
     * Seconds a store operation waits for Redis' answer before the request answers 503 (time the service
     * itself was not running does not count). Default 2.
     */
    commandTimeout: z.number().positive().max(60).optional(),
  })
  .strict();

export const storeSchema = z
  .union([z.literal('memory'), z.string().regex(/^rediss?:\/\//, 'must be "memory" or a redis:// URL'), redisSchema])
  .default('memory');

export const keysSchema = z
  .object({
    idToken: z.string().default('./keys/id-token.jwks.json'),
    credential: z.string().default('./keys/credential.jwks.json'),
    cookies: z.string().default('./keys/cookies.json'),
    /** D12: the secret behind pairwise subjects; never rotated (a new one changes every pairwise sub) */
    pairwise: z.string().default('./keys/pairwise.json'),
    generate: z.boolean().default(true),
    /** D20: `npm run keys -- rotate`: a new key is published at once and signs only after activateAfter */
    rotation: z
      .object({
        /** longer than any client's JWKS cache (ISO 8601 duration) */
        activateAfter: isoDuration.default('PT1H'),
        /** seconds between two looks of an instance at its key files or store keys for a rotated set */
        reloadInterval: z.number().positive().max(3600).default(10),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({});

export const lifetimesSchema = z
  .object({
    par: z.number().int().positive().default(60),
    code: z.number().int().positive().default(60),
    token: z.number().int().positive().default(60),
    offer: z.number().int().positive().default(300),
    interaction: z.number().int().positive().default(600),
    continuation: z.number().int().positive().default(300),
  })
  .strict()
  .prefault({});

export const hintSchema = z
  .object({
    clockTolerance: z.number().int().min(0).default(30),
    maxLength: z
      .number()
      .int()
      .positive()
      .default(1024 * 1024),
    /** seconds: a hint whose `exp` is further ahead is refused (D7), so nothing it carries is kept longer */
    maxLifetime: z.number().int().positive().default(3600),
  })
  .strict()
  .prefault({});

/** D13: delivering External Client flow events */
export const webhookDeliverySchema = z
  .object({
    /** seconds an attempt may take */
    timeout: z.number().positive().max(60).default(10),
    /** seconds before the first retry; each next one about twice as late */
    firstRetry: z.number().positive().default(5),
    /** how long a delivery is retried (ISO 8601 duration) */
    retryWindow: isoDuration.default('P1D'),
  })
  .strict()
  .prefault({});

/** Prometheus metrics on a listener of their own (off unless a port is set) */
export const metricsSchema = z
  .object({
    port: z.number().int().min(0).max(65535).optional(),
    /** never the public interface by default: metrics are for the operator's scraper */
    host: z.string().default('127.0.0.1'),
    /** client_id as a label of the flow counters (one series per client) */
    perClient: z.boolean().default(false),
  })
  .strict()
  .prefault({});

/**
 * Per client and per source address, on the configured store (rate-limiter-flexible's points per
 * duration in seconds). The defaults are flood guards sized above what one instance serves; lower
 * them to a deployment's traffic (docs/operations.md).
 */
export const rateLimitsSchema = z
  .object({
    par: rateLimitSchema.default(DEFAULT_RATE_LIMITS.par),
    token: rateLimitSchema.default(DEFAULT_RATE_LIMITS.token),
    /** the UserInfo endpoints (an addition beyond the interface): per address, and per client once the token is verified */
    userinfo: rateLimitSchema.default(DEFAULT_RATE_LIMITS.userinfo),
    walletToken: rateLimitSchema.default(DEFAULT_RATE_LIMITS.walletToken),
    credential: rateLimitSchema.default(DEFAULT_RATE_LIMITS.credential),
    vpResponse: rateLimitSchema.default(DEFAULT_RATE_LIMITS.vpResponse),
    promptStatus: addressLimitSchema.default(DEFAULT_RATE_LIMITS.promptStatus),
    promptDcApi: addressLimitSchema.default(DEFAULT_RATE_LIMITS.promptDcApi),
  })
  .strict()
  .prefault({});
