import { z } from 'zod';
import { isLoopbackHost } from '../../rules/loopback.js';
import { canonicalTag } from '../../i18n/negotiate.js';

/** ISO 8601 duration in days/hours/minutes/seconds, e.g. P365D, PT12H. */
export const isoDuration = z
  .string()
  .regex(
    /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/,
    'must be an ISO 8601 duration such as P365D',
  );

/** a budget in rate-limiter-flexible's terms: `points` requests per `duration` seconds */
export const budget = z
  .object({ points: z.number().int().positive(), duration: z.number().int().positive().max(86400) })
  .strict();
export const rateLimitSchema = z.object({ perClient: budget.optional(), perAddress: budget.optional() }).strict();
/** an endpoint that knows no client before its work: a budget per address only */
export const addressLimitSchema = z.object({ perAddress: budget.optional() }).strict();
export const flood = (points: number) => ({ perClient: { points, duration: 1 }, perAddress: { points, duration: 1 } });
export const DEFAULT_RATE_LIMITS = {
  par: flood(10000),
  token: flood(10000),
  userinfo: flood(10000),
  walletToken: flood(2000),
  credential: flood(2000),
  vpResponse: flood(2000),
  // a holder's page polls its progress once a second, and asks for its Digital Credentials API requests
  // once when it loads: many holders behind one NAT stay far below these
  promptStatus: { perAddress: { points: 2000, duration: 1 } },
  promptDcApi: { perAddress: { points: 200, duration: 1 } },
};

export const absoluteUrl = z.string().refine((v) => {
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}, 'must be an absolute http(s) URL');

export const languageTag = z
  .string()
  .refine((v) => canonicalTag(v) !== undefined, 'must be a BCP 47 language tag such as en or de-CH');

/** The most languages a text may be given in: the texts are published in metadata and held in memory. */
export const MAX_LANGUAGES = 64;

/** A text holders read: one string, or one per language (`{en: ..., de: ...}`), shown in the page's language. */
export const localizedText = (max = 200) =>
  z.union([
    z.string().min(1).max(max),
    z
      .record(languageTag, z.string().min(1).max(max))
      .refine((t) => Object.keys(t).length > 0, 'must give the text in at least one language')
      .refine(
        (t) => Object.keys(t).length <= MAX_LANGUAGES,
        `must give the text in at most ${MAX_LANGUAGES} languages`,
      ),
  ]);

export const jwksSchema = z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).passthrough();

/** https, or http on a loopback host (development) */
export const httpsOrLoopbackUrl = (u: URL) =>
  u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname));

/** An http URL only on a loopback host (development); https anywhere. */
export const httpsOrLoopback = (what: string) =>
  z.string().refine((v) => {
    try {
      const u = new URL(v);
      return !u.username && !u.password && !u.search && !u.hash && httpsOrLoopbackUrl(u);
    } catch {
      return false;
    }
  }, `must be an https ${what} (http only on a loopback host), without user, password, query or fragment`);
