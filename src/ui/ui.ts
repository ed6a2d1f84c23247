import { isAbsolute, resolve } from 'node:path';
import type { Context, Middleware } from 'koa';
import type { Config } from '../config/schema.js';
import type { Logger } from '../log.js';
import { Catalogues, ENGLISH, type Texts } from '../i18n/catalogues.js';
import type { BrandView } from '../interaction/views/layout.js';
import { ImageError, isImageUrl, loadImage, type ServedImage } from './images.js';

/** The brand's colours as CSS custom properties (colours checked for contrast by the config schema). */
export function brandCss(ui: Config['ui']): string | undefined {
  const rules: string[] = [];
  if (ui.primaryColor) {
    // light scheme: buttons, links and focus rings; dark scheme keeps its own light accent for text, and fills buttons with the brand
    rules.push(
      `@media not (prefers-color-scheme: dark) { :root { --accent: ${ui.primaryColor}; --accent-hover: ${ui.primaryColor}; --accent-ink: #ffffff; --accent-soft-ink: ${ui.primaryColor}; } }`,
    );
    rules.push(
      `@media (prefers-color-scheme: dark) { .button--primary, .button--primary:hover { background: ${ui.primaryColor}; color: #ffffff; } }`,
    );
  }
  if (ui.accentColor) rules.push(`.avatar, .cred-icon { background: ${ui.accentColor}; color: #ffffff; }`);
  return rules.length ? rules.join('\n') : undefined;
}

/**
 * What every holder page shows of the operator (config `ui`) and in which language: the catalogues, the
 * brand, and the logos the service serves itself (the operator's and the relying parties').
 */
export class HolderUi {
  readonly #brands = new Map<string, BrandView>();
  readonly #css: string | undefined;

  constructor(
    readonly catalogues: Catalogues,
    private readonly config: Config['ui'],
    readonly logo: ServedImage | undefined,
    private readonly clientLogos: ReadonlyMap<string, ServedImage>,
    /** the credential types' card images (logo, background image), by their configured source */
    readonly cardImages: ReadonlyMap<string, ServedImage> = new Map(),
  ) {
    this.#css = brandCss(config);
  }

  /** Catalogues read, the logo fetched or read: a broken catalogue or logo file stops the start-up; a logo URL that fails is left out (logged). */
  static async load(config: Config, baseDir: string, logger?: Logger): Promise<HolderUi> {
    const ui = config.ui;
    const catalogues = Catalogues.load(
      ui.defaultLocale,
      ui.locales ? (isAbsolute(ui.locales) ? ui.locales : resolve(baseDir, ui.locales)) : undefined,
    );
    const tryLoad = async (source: string, where: string): Promise<ServedImage | undefined> => {
      try {
        return await loadImage(source, baseDir, where);
      } catch (err) {
        if (err instanceof ImageError && isImageUrl(source)) {
          logger?.warn({ where, reason: err.message }, 'logo left out: it could not be loaded at start-up');
          return undefined;
        }
        throw err;
      }
    };
    const logo = ui.logo ? await tryLoad(ui.logo, 'ui.logo') : undefined;
    const clientLogos = new Map<string, ServedImage>();
    await Promise.all(
      config.clients.map(async (c, i) => {
        if (!c.logoUri) return;
        const image = await tryLoad(c.logoUri, `clients[${i}].logoUri`);
        if (image) clientLogos.set(c.clientId, image);
      }),
    );
    return new HolderUi(catalogues, ui, logo, clientLogos, await loadCardImages(config, baseDir));
  }

  /** The holder's language for this request: the request's `ui_locales`, then the browser's Accept-Language, then ui.defaultLocale. */
  texts(ctx: Context, uiLocales?: unknown): Texts {
    return this.catalogues.chooseFor(uiLocales, ctx.get('Accept-Language'), () => ctx.acceptsLanguages());
  }

  brand(t: Texts): BrandView {
    let b = this.#brands.get(t.lang);
    if (!b) {
      b = {
        name: t.pick(this.config.name),
        logoHref: this.logo?.path,
        supportUrl: this.config.supportUrl,
        privacyUrl: this.config.privacyUrl,
        css: this.#css,
      };
      this.#brands.set(t.lang, b);
    }
    return b;
  }

  clientLogo(clientId: string): string | undefined {
    return this.clientLogos.get(clientId)?.path;
  }

  /** Serves the logos at their content-named paths; the pages' CSP allows images from the service itself. */
  routes(): Middleware {
    const images = new Map<string, ServedImage>();
    for (const image of [this.logo, ...this.clientLogos.values(), ...this.cardImages.values()])
      if (image) images.set(image.path, image);
    return async (ctx, next) => {
      const image = ctx.method === 'GET' || ctx.method === 'HEAD' ? images.get(ctx.path) : undefined;
      if (!image) return next();
      ctx.type = image.type;
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.set('X-Content-Type-Options', 'nosniff');
      // an SVG opened on its own runs nothing
      ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; sandbox");
      ctx.body = image.bytes;
    };
  }
}

/**
 * The credential types' card images, each read or fetched once. Unlike the brand's logos, one that cannot be
 * loaded stops the start-up, naming its config path: a card published without it would differ from instance
 * to instance, and so would the type metadata whose digest each credential carries (docs/decisions.md).
 */
async function loadCardImages(config: Config, baseDir: string): Promise<Map<string, ServedImage>> {
  const wanted = new Map<string, string>();
  config.credentialTypes.forEach((t, i) => {
    const where = `credentialTypes[${i}] (name ${t.name}).card`;
    if (t.card?.logo && !wanted.has(t.card.logo.image)) wanted.set(t.card.logo.image, `${where}.logo.image`);
    if (t.card?.backgroundImage && !wanted.has(t.card.backgroundImage))
      wanted.set(t.card.backgroundImage, `${where}.backgroundImage`);
  });
  const loaded = await Promise.all(
    [...wanted].map(async ([source, where]) => [source, await loadImage(source, baseDir, where)] as const),
  );
  return new Map(loaded);
}

/** The holder's language and the brand for a page, from the service's HolderUi (set on every request by the app). */
export function pageTexts(ctx: Context, uiLocales?: unknown): { texts: Texts; brand?: BrandView } {
  const ui = ctx.state?.ui as HolderUi | undefined;
  if (!ui) return { texts: ENGLISH };
  const texts = ui.texts(ctx, uiLocales);
  return { texts, brand: ui.brand(texts) };
}
