import { isIP } from 'node:net';
import { credentialExpiry } from '../rules/validity.js';
import { z } from 'zod';
import { RESERVED_CLAIM_NAMES } from '../rules/claimNames.js';
import { EXTERNAL, isIdentityScope } from '../rules/scopes.js';
import { isLoopbackHost } from '../rules/loopback.js';
import { AA_TEXT, contrastRatio, HEX_COLOUR } from '../rules/contrast.js';
import { canonicalTag } from '../i18n/negotiate.js';
import { vctFor } from '../issuance/credentialConfigurations.js';
import { ANCHOR_FORMATS, isOwnVct } from '../keys/trustAnchors.js';

/** ISO 8601 duration in days/hours/minutes/seconds, e.g. P365D, PT12H. */
const isoDuration = z
  .string()
  .regex(
    /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/,
    'must be an ISO 8601 duration such as P365D',
  );

/** a budget in rate-limiter-flexible's terms: `points` requests per `duration` seconds */
const budget = z
  .object({ points: z.number().int().positive(), duration: z.number().int().positive().max(86400) })
  .strict();
const rateLimitSchema = z.object({ perClient: budget.optional(), perAddress: budget.optional() }).strict();
const flood = (points: number) => ({ perClient: { points, duration: 1 }, perAddress: { points, duration: 1 } });
const DEFAULT_RATE_LIMITS = {
  par: flood(10000),
  token: flood(10000),
  walletToken: flood(2000),
  credential: flood(2000),
  vpResponse: flood(2000),
};

const absoluteUrl = z.string().refine((v) => {
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}, 'must be an absolute http(s) URL');

const languageTag = z
  .string()
  .refine((v) => canonicalTag(v) !== undefined, 'must be a BCP 47 language tag such as en or de-CH');

/** A text holders read: one string, or one per language (`{en: ..., de: ...}`), shown in the page's language. */
export const localizedText = (max = 200) =>
  z.union([
    z.string().min(1).max(max),
    z
      .record(languageTag, z.string().min(1).max(max))
      .refine((t) => Object.keys(t).length > 0, 'must give the text in at least one language'),
  ]);

export const attributeTypes = ['string', 'number', 'boolean', 'date', 'email', 'image'] as const;

export const attributeSchema = z
  .object({
    type: z.enum(attributeTypes),
    required: z.boolean().default(true),
    /** image attributes only: accepted media types and decoded size limit */
    formats: z
      .array(z.enum(['image/png', 'image/jpeg']))
      .min(1)
      .optional(),
    maxBytes: z.number().int().positive().optional(),
    /**
     * image attributes only: limits on the declared dimensions, checked before anything is decoded, so a
     * small file cannot make a decoder allocate gigabytes (defaults 4096, 4096 and maxWidth * maxHeight;
     * 2^31 - 1 is PNG's own maximum)
     */
    maxWidth: z.number().int().positive().max(0x7fffffff).optional(),
    maxHeight: z.number().int().positive().max(0x7fffffff).optional(),
    maxPixels: z.number().int().positive().optional(),
    /** display name shown to holders, one string or per language */
    label: localizedText().optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.type === 'image') return;
    for (const key of ['maxWidth', 'maxHeight', 'maxPixels'] as const) {
      if (a[key] !== undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: `${key} applies to image attributes only` });
    }
  });

export const credentialTypeSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'must be letters, digits, _ or -, starting with a letter'),
    vct: absoluteUrl.optional(),
    displayName: localizedText().optional(),
    validity: isoDuration.default('P365D'),
    pinCodeLength: z.number().int().min(1).max(12).optional(),
    /**
     * also as an ISO mdoc, its attributes being elements of `namespace`: verification asks for it (OpenID4VP 1.0
     * §B.2) and issuance offers it as a second configuration, `<name>.mso_mdoc` (OpenID4VCI 1.0 Appendix A.2)
     */
    mdoc: z
      .object({ doctype: z.string().min(1).max(256), namespace: z.string().min(1).max(256) })
      .strict()
      .optional(),
    /** issuance: `required` refuses a proof without a key attestation (OpenID4VCI 1.0 Appendix D) */
    keyAttestation: z.enum(['required', 'optional']).optional(),
    attributes: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'attribute names must be identifiers'), attributeSchema)
      .refine((a) => Object.keys(a).length > 0, 'must declare at least one attribute')
      .superRefine((a, ctx) => {
        for (const name of Object.keys(a)) {
          if (RESERVED_CLAIM_NAMES.has(name))
            ctx.addIssue({ code: 'custom', path: [name], message: `${name} is a reserved claim name` });
        }
      }),
  })
  .strict();

const jwksSchema = z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).passthrough();

/** `whsec_` and the base64 of 24 to 64 random bytes (Standard Webhooks' secret format). */
const webhookSecret = z.string().refine((v) => {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(v);
  if (!m) return false;
  const bytes = Buffer.from(m[1], 'base64').length;
  return bytes >= 24 && bytes <= 64;
}, 'must be a Standard Webhooks secret: whsec_ and the base64 of 24 to 64 random bytes');

/** https, or http on a loopback host (development) */
const httpsOrLoopbackUrl = (u: URL) =>
  u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname));

/** https, or http on a loopback host (development). */
const webhookUrl = z.string().refine((v) => {
  try {
    const u = new URL(v);
    if (u.username || u.password) return false; // credentials in a URL end up in error messages
    return httpsOrLoopbackUrl(u);
  } catch {
    return false;
  }
}, 'must be an https URL (http only on a loopback host), without user or password');

/** D13: where a client's External Client flow events go, signed with each listed secret. */
export const webhookSchema = z
  .object({
    url: webhookUrl,
    secret: webhookSecret.optional(),
    /** for rotation: every listed secret signs, so the header carries one signature per secret */
    secrets: z.array(webhookSecret).min(1).optional(),
  })
  .strict()
  .refine((w) => (w.secret === undefined) !== (w.secrets === undefined), 'give either secret or secrets');

export const clientSchema = z
  .object({
    clientId: z.string().min(1).max(200),
    clientSecret: z.string().min(16, 'must be at least 16 characters'),
    clientName: z.string().optional(),
    /** the relying party's logo, shown beside "Request from ...": fetched once at start-up and served by us */
    logoUri: z
      .string()
      .refine(
        (v) => URL.canParse(v) && httpsOrLoopbackUrl(new URL(v)),
        'must be an https URL (http only on a loopback host)',
      )
      .optional(),
    redirectUris: z.array(absoluteUrl).min(1),
    pkce: z.enum(['required', 'optional']).default('optional'),
    pkceMethods: z
      .array(z.enum(['S256', 'plain']))
      .min(1)
      .default(['S256', 'plain']),
    scopes: z.array(z.string().min(1)).min(1),
    hintKeys: z.object({ jwks: jwksSchema.optional(), jwksUri: absoluteUrl.optional() }).strict().optional(),
    /** D3: `expires_in` as a string of digits, for clients coded against the spec's sample */
    expiresInAsString: z.boolean().default(false),
    /** D1: ID token `iss` pinned to `{base_url}/oidc` for Version 2 clients coded against the sample */
    legacyV2Issuer: z.boolean().default(false),
    /** D13: required for the scope External */
    webhook: webhookSchema.optional(),
    /** verification: the ID token names, per credential type, the issuer that vouched for it (`vc_issuer`) */
    vcIssuerClaim: z.boolean().default(false),
  })
  .strict();

/** The claim `vcIssuerClaim` adds to the ID token. */
export const VC_ISSUER_CLAIM = 'vc_issuer';

/** a PEM file of anchors, and what they may vouch for */
export const trustAnchorSchema = z
  .object({
    /** PEM certificates, relative to the config file */
    certificates: z.string().min(1),
    formats: z.array(z.enum(ANCHOR_FORMATS)).min(1),
    /** names of configured credential types; left out: any type (for dc+sd-jwt, any type not this service's own) */
    types: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();

export const trustedIssuerSchema = z
  .object({
    issuer: absoluteUrl,
    jwks: jwksSchema.optional(),
    jwksUri: absoluteUrl.optional(),
  })
  .strict();

/** An http URL only on a loopback host (development); https anywhere. */
const httpsOrLoopback = (what: string) =>
  z.string().refine((v) => {
    try {
      const u = new URL(v);
      return !u.username && !u.password && !u.search && !u.hash && httpsOrLoopbackUrl(u);
    } catch {
      return false;
    }
  }, `must be an https ${what} (http only on a loopback host), without user, password, query or fragment`);

/** Claim names a relying party reads in our ID token: the registered ones stay ours. */
const claimName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'claim names must be identifiers')
  .refine((n) => !RESERVED_CLAIM_NAMES.has(n), 'is a reserved claim name');

/** D12: the identity-verification flows, one block per scope. */
export const identitySchema = z
  .object({
    /** the holder presents a person-identification credential (SD-JWT VC PID) */
    VerifiedIdentity: z
      .object({
        vct: z.array(z.string().min(1)).min(1).default(['urn:eudi:pid:1']),
        displayName: localizedText().default('Identity document'),
        claims: z.array(claimName).min(1).default(['given_name', 'family_name', 'birthdate']),
        optionalClaims: z.array(claimName).default([]),
        /** what the prompt calls a claim, per language; the shipped catalogues name the EU PID's standard claims */
        labels: z.record(claimName, localizedText()).default({}),
        /** a persistent identifier in the PID: `sub` stays the same for the same person */
        subjectClaim: claimName.optional(),
        trustedIssuers: z
          .array(
            z
              .object({
                issuer: httpsOrLoopback('issuer'),
                jwks: jwksSchema.optional(),
                jwksUri: httpsOrLoopback('jwksUri').optional(),
              })
              .strict(),
          )
          .min(1),
      })
      .strict()
      .superRefine((b, ctx) => {
        const seen = new Set<string>();
        [...b.claims, ...b.optionalClaims].forEach((name, i) => {
          if (seen.has(name))
            ctx.addIssue({
              code: 'custom',
              path: i < b.claims.length ? ['claims', i] : ['optionalClaims', i - b.claims.length],
              message: `${name} is listed twice`,
            });
          seen.add(name);
        });
      })
      .optional(),
    /** a hosted identity-verification provider, an OpenID Connect provider */
    VerifiedIdentity_Other: z
      .object({
        displayName: localizedText(100),
        issuer: httpsOrLoopback('issuer'),
        clientId: z.string().min(1),
        clientSecret: z.string().min(1),
        clientAuth: z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
        scopes: z
          .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'must be an OAuth scope token'))
          .min(1)
          .default(['openid'])
          .refine((s) => s.includes('openid'), 'must contain openid'),
        /** provider claim -> our ID token claim */
        claims: z
          .record(z.string().min(1), claimName)
          .refine((c) => Object.keys(c).length > 0, 'must map at least one claim'),
        /** OpenID Connect for Identity Assurance: ask for the claims as `verified_claims` and map those */
        verifiedClaims: z.boolean().default(false),
      })
      .strict()
      .optional(),
  })
  .strict();

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
  })
  .strict();

export const configSchema = z
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
    store: z
      .union([
        z.literal('memory'),
        z.string().regex(/^rediss?:\/\//, 'must be "memory" or a redis:// URL'),
        redisSchema,
      ])
      .default('memory'),
    keys: z
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
      .prefault({}),
    lifetimes: z
      .object({
        par: z.number().int().positive().default(60),
        code: z.number().int().positive().default(60),
        token: z.number().int().positive().default(60),
        offer: z.number().int().positive().default(300),
        interaction: z.number().int().positive().default(600),
        continuation: z.number().int().positive().default(300),
      })
      .strict()
      .prefault({}),
    hint: z
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
      .prefault({}),
    /** the longest `state` and `nonce` accepted: both are kept with the request and sent back */
    maxParameterLength: z.number().int().min(64).max(65536).default(512),
    pinAttempts: z.number().int().min(1).max(10).default(3),
    /** D4: RFC 6749 error codes (invalid_client, 401) instead of the spec's, for certification runs */
    rfc6749Errors: z.boolean().default(false),
    walletPath: z
      .string()
      .regex(/^[a-z0-9-]+$/)
      .default('wallet'),
    credentialTypes: z.array(credentialTypeSchema).min(1),
    clients: z.array(clientSchema).min(1),
    trustedIssuers: z.array(trustedIssuerSchema).default([]),
    /** D12: the identity-verification flows (scopes VerifiedIdentity, VerifiedIdentity_Other) */
    identity: identitySchema.default({}),
    /** the wallet-facing verifier (OpenID4VP 1.0, OpenID4VC HAIP 1.0): how it identifies itself and how wallets answer */
    verifier: z
      .object({
        /** OpenID4VP 1.0 §5.9.3; redirect_uri (unsigned requests) is for development only */
        clientIdPrefix: z.enum(['x509_hash', 'x509_san_dns', 'redirect_uri']).default('x509_hash'),
        /** PEM, leaf first, without the trust anchor */
        certificateChain: z.string().default('./keys/verifier-chain.pem'),
        /** PEM, the leaf's P-256 private key */
        key: z.string().default('./keys/verifier-key.pem'),
        responseMode: z.enum(['direct_post.jwt', 'direct_post']).default('direct_post.jwt'),
        /**
         * Trust anchors, each for its formats and (optionally) credential types. A single PEM file name is
         * read as mdoc IACAs only (formats [mso_mdoc]).
         */
        trustAnchors: z.union([z.string().min(1), z.array(trustAnchorSchema)]).optional(),
      })
      .strict()
      .prefault({}),
    /**
     * The credential issuer's X.509 certificate (OpenID4VC HAIP 1.0 §6.1.1): its chain goes into the `x5c` header
     * of every SD-JWT VC and Status List Token. Both files: that key signs (instead of keys.credential, whose keys
     * stay published). Neither, with keys.generate: a local issuer CA certifies each credential key.
     */
    issuer: z
      .object({
        /** PEM, leaf first, without the trust anchor; the leaf names the credential issuer (subjectAltName URI or dNSName) */
        certificateChain: z.string().default('./keys/issuer-chain.pem'),
        /** PEM, the leaf's P-256 private key: the credential signing key */
        key: z.string().default('./keys/issuer-key.pem'),
        /** PEM leaf certificates of earlier issuer keys: published until removed, so that what they signed keeps verifying */
        previousCertificates: z.array(z.string()).default([]),
        /**
         * ISO mdoc issuance: the document signer (PEM chain, signer first, without the IACA; and its P-256 key).
         * Left out: the local issuer CA makes one per credential key, and with an operator's certificate credential
         * types are issued as SD-JWT VCs only.
         */
        documentSigner: z
          .object({ certificateChain: z.string().min(1), key: z.string().min(1) })
          .strict()
          .optional(),
      })
      .strict()
      .prefault({}),
    /** D18: the Token Status Lists of issued credentials, and the status checks of presented ones */
    statusList: z
      .object({
        /** seconds a Status List Token may be cached (its `ttl`, and Cache-Control) */
        ttl: z.number().int().min(1).max(86400).default(300),
        /** entries per list; a full list starts a new one */
        size: z
          .number()
          .int()
          .min(1024)
          .max(1 << 24)
          .default(1 << 17),
        /** verification: a credential whose status list cannot be fetched is refused (default) or accepted */
        onUnavailable: z.enum(['refuse', 'accept']).default('refuse'),
        /**
         * verification: a fetched list of more entries is refused, before it takes more memory
         * than such a list needs (maxEntries × bits / 8 bytes); the default is 16 Mi
         */
        maxEntries: z
          .number()
          .int()
          .min(1024)
          .max(1 << 26)
          .default(1 << 24),
      })
      .strict()
      // this service's verifier reads its own lists too
      .refine((s) => s.size <= s.maxEntries, { message: 'size must not exceed maxEntries', path: ['size'] })
      .prefault({}),
    /** the operator API (`/admin/...`): off unless a token is set */
    admin: z
      .object({ token: z.string().min(32, 'must be at least 32 characters').optional() })
      .strict()
      .default({}),
    /** issuance: OAuth 2.0 Attestation-Based Client Authentication of wallets at the token endpoint */
    walletAttestation: z
      .object({
        required: z.boolean().default(false),
        /** wallet providers whose attestations (wallet and key attestations) are trusted */
        trustedProviders: z
          .array(
            z
              .object({
                name: z.string().min(1).max(100),
                jwks: jwksSchema.optional(),
                certificates: z.string().optional(),
              })
              .strict()
              .refine(
                (p) => (p.jwks === undefined) !== (p.certificates === undefined),
                'needs exactly one of jwks or certificates (a PEM file of roots)',
              ),
          )
          .default([]),
      })
      .strict()
      .prefault({}),
    /** D13: delivering External Client flow events */
    webhooks: z
      .object({
        /** seconds an attempt may take */
        timeout: z.number().positive().max(60).default(10),
        /** seconds before the first retry; each next one about twice as late */
        firstRetry: z.number().positive().default(5),
        /** how long a delivery is retried (ISO 8601 duration) */
        retryWindow: isoDuration.default('P1D'),
      })
      .strict()
      .prefault({}),
    /** Prometheus metrics on a listener of their own (off unless a port is set) */
    metrics: z
      .object({
        port: z.number().int().min(0).max(65535).optional(),
        /** never the public interface by default: metrics are for the operator's scraper */
        host: z.string().default('127.0.0.1'),
        /** client_id as a label of the flow counters (one series per client) */
        perClient: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    /**
     * Per client and per source address, on the configured store (rate-limiter-flexible's points per
     * duration in seconds). The defaults are flood guards sized above what one instance serves; lower
     * them to a deployment's traffic (docs/operations.md).
     */
    rateLimits: z
      .object({
        par: rateLimitSchema.default(DEFAULT_RATE_LIMITS.par),
        token: rateLimitSchema.default(DEFAULT_RATE_LIMITS.token),
        walletToken: rateLimitSchema.default(DEFAULT_RATE_LIMITS.walletToken),
        credential: rateLimitSchema.default(DEFAULT_RATE_LIMITS.credential),
        vpResponse: rateLimitSchema.default(DEFAULT_RATE_LIMITS.vpResponse),
      })
      .strict()
      .prefault({}),
    /** the holder pages' languages and the operator's brand */
    ui: z
      .object({
        /** the language of a holder whose request and browser name none that a catalogue serves */
        defaultLocale: languageTag.default('en'),
        /** a directory of more catalogues (`<tag>.json`), relative to the config file; they override the shipped ones */
        locales: z.string().min(1).optional(),
        /** the operator's name, shown at the top of every holder page */
        name: localizedText(100).optional(),
        /** a PNG, JPEG, WebP or SVG file (relative to the config file) or an https URL, fetched once at start-up */
        logo: z.string().min(1).optional(),
        /** buttons, links and focus rings (white text on it, and it on the white page: AA) */
        primaryColor: z.string().regex(HEX_COLOUR, 'must be a colour written #rgb or #rrggbb').optional(),
        /** the "Request from" badge and the credential icon (white text on it: AA) */
        accentColor: z.string().regex(HEX_COLOUR, 'must be a colour written #rgb or #rrggbb').optional(),
        supportUrl: httpsOrLoopback('supportUrl').optional(),
        privacyUrl: httpsOrLoopback('privacyUrl').optional(),
      })
      .strict()
      .superRefine((ui, ctx) => {
        for (const key of ['primaryColor', 'accentColor'] as const) {
          const colour = ui[key];
          if (colour === undefined || !HEX_COLOUR.test(colour)) continue;
          const ratio = contrastRatio(colour, '#ffffff');
          if (ratio < AA_TEXT) {
            ctx.addIssue({
              code: 'custom',
              path: [key],
              message: `${colour} against white (#ffffff) has a contrast ratio of ${ratio.toFixed(2)}:1; WCAG AA needs at least ${AA_TEXT}:1 for text (choose a darker colour)`,
            });
          }
        }
      })
      .prefault({}),
    /** serves /demo: a relying party for trying the flows in a browser (never in production) */
    demo: z.boolean().default(false),
    logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'silent']).default('info'),
  })
  .strict()
  .superRefine((cfg, ctx) => {
    const { activateAfter, reloadInterval } = cfg.keys.rotation;
    const now = new Date();
    if (credentialExpiry(activateAfter, now).getTime() - now.getTime() < 2 * reloadInterval * 1000) {
      ctx.addIssue({
        code: 'custom',
        path: ['keys', 'rotation', 'activateAfter'],
        message: `must be at least twice keys.rotation.reloadInterval (${reloadInterval} s): every instance must publish a new key before it signs`,
      });
    }
    if (cfg.walletAttestation.required && cfg.walletAttestation.trustedProviders.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['walletAttestation', 'trustedProviders'],
        message: 'must name at least one wallet provider when walletAttestation.required is true',
      });
    }
    const types = new Set<string>();
    cfg.credentialTypes.forEach((t, i) => {
      if (t.keyAttestation === 'required' && cfg.walletAttestation.trustedProviders.length === 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['credentialTypes', i, 'keyAttestation'],
          message:
            'required needs walletAttestation.trustedProviders: the wallet providers whose key attestations are trusted',
        });
      }
      if (types.has(t.name))
        ctx.addIssue({
          code: 'custom',
          path: ['credentialTypes', i, 'name'],
          message: `duplicate credential type ${t.name}`,
        });
      types.add(t.name);
      for (const [name, attr] of Object.entries(t.attributes)) {
        if (attr.type !== 'image' && (attr.formats || attr.maxBytes)) {
          ctx.addIssue({
            code: 'custom',
            path: ['credentialTypes', i, 'attributes', name],
            message: 'formats and maxBytes apply to image attributes only',
          });
        }
      }
    });
    const byName = new Map(cfg.credentialTypes.map((t) => [t.name, t]));
    const anchors = cfg.verifier.trustAnchors;
    if (Array.isArray(anchors)) {
      anchors.forEach((a, i) =>
        a.types?.forEach((name, j) => {
          const type = byName.get(name);
          const path = ['verifier', 'trustAnchors', i, 'types', j];
          if (!type) return ctx.addIssue({ code: 'custom', path, message: `unknown credential type ${name}` });
          const own = isOwnVct(vctFor(type, cfg.baseUrl.replace(/\/+$/, '')), cfg.baseUrl);
          const usable =
            (a.formats.includes('dc+sd-jwt') && !own) || (a.formats.includes('mso_mdoc') && type.mdoc !== undefined);
          if (!usable) {
            ctx.addIssue({
              code: 'custom',
              path,
              message: `this anchor cannot vouch for ${name}: ${own ? "its vct is this service's own, so its SD-JWT VCs come only from this service's issuer or trustedIssuers" : 'it is not asked for as dc+sd-jwt here'}${a.formats.includes('mso_mdoc') ? ', and it has no mdoc' : ''}`,
            });
          }
        }),
      );
    }
    const ids = new Set<string>();
    cfg.clients.forEach((c, i) => {
      if (ids.has(c.clientId))
        ctx.addIssue({ code: 'custom', path: ['clients', i, 'clientId'], message: `duplicate client ${c.clientId}` });
      ids.add(c.clientId);
      if (c.scopes.includes(EXTERNAL) && !c.webhook) {
        ctx.addIssue({
          code: 'custom',
          path: ['clients', i, 'webhook'],
          message: `is required: the client lists the scope ${EXTERNAL}`,
        });
      }
      c.scopes.forEach((s, j) => {
        if (c.vcIssuerClaim && byName.get(s)?.attributes[VC_ISSUER_CLAIM]) {
          ctx.addIssue({
            code: 'custom',
            path: ['clients', i, 'vcIssuerClaim'],
            message: `the type ${s} has an attribute named ${VC_ISSUER_CLAIM}, the claim this setting adds`,
          });
        }
        if (s === EXTERNAL) return;
        if (isIdentityScope(s)) {
          if (!cfg.identity[s])
            ctx.addIssue({
              code: 'custom',
              path: ['identity', s],
              message: `is required: clients[${i}] lists the scope ${s}`,
            });
          return;
        }
        const name = s.startsWith('issue.') ? s.slice('issue.'.length) : s;
        if (!types.has(name)) {
          ctx.addIssue({
            code: 'custom',
            path: ['clients', i, 'scopes', j],
            message: `unknown credential type ${name}`,
          });
        }
      });
    });
  });

export type Config = z.output<typeof configSchema>;
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
