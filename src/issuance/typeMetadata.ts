import type { Middleware } from 'koa';
import type { CredentialType } from '../config/schema.js';
import { PLAIN_CARD_SOURCES, sriOf, typeMetadataOf, type CardSources } from './card.js';
import { defaultVct, vctFor } from './credentialConfigurations.js';

/** The path of a type's metadata under the base URL: its default vct, `{base_url}/types/<name>`. */
export const TYPE_METADATA_PREFIX = '/types/';

interface Served {
  /** the document as served: its integrity is of these bytes */
  bytes: Buffer;
  integrity: string;
}

/**
 * SD-JWT VC Type Metadata (draft-ietf-oauth-sd-jwt-vc, "Retrieving Type Metadata" from the vct URL) of the
 * types whose vct is this service's own `{base_url}/types/<name>`: each document serialised once, at start-up,
 * so that the bytes served are the bytes whose digest each credential carries as `vct#integrity`. A type
 * whose vct the operator set elsewhere has its metadata where that vct points, not here.
 */
export class TypeMetadata {
  readonly #byPath = new Map<string, Served>();
  readonly #byVct = new Map<string, Served>();

  constructor(types: CredentialType[], baseUrl: string, sources: CardSources = PLAIN_CARD_SOURCES) {
    for (const type of types) {
      const vct = vctFor(type, baseUrl);
      if (vct !== defaultVct(type, baseUrl)) continue;
      const bytes = Buffer.from(JSON.stringify(typeMetadataOf(type, vct, sources)));
      const served = { bytes, integrity: sriOf(bytes) };
      this.#byPath.set(`${TYPE_METADATA_PREFIX}${type.name}`, served);
      this.#byVct.set(vct, served);
    }
  }

  /** `vct#integrity` for a credential of this vct (W3C SRI, sha256), when this service serves its metadata. */
  integrityOf(vct: string): string | undefined {
    return this.#byVct.get(vct)?.integrity;
  }

  /** GET `/types/<name>`: the document, public and cacheable (its content changes only with the config). */
  routes(): Middleware {
    return (ctx, next) => {
      const served = ctx.method === 'GET' || ctx.method === 'HEAD' ? this.#byPath.get(ctx.path) : undefined;
      if (!served) return next();
      ctx.type = 'application/json';
      ctx.set('Access-Control-Allow-Origin', '*');
      ctx.set('Cache-Control', 'public, max-age=3600');
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.body = served.bytes;
      return Promise.resolve();
    };
  }
}
