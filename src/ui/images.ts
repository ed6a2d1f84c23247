import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';

/** A logo the service serves itself (pages fetch nothing from third parties). */
export interface ServedImage {
  bytes: Buffer;
  type: 'image/png' | 'image/jpeg' | 'image/webp' | 'image/svg+xml';
  /** the path it is served at: named by its content, so it can be cached for good */
  path: string;
}

export const MAX_IMAGE_BYTES = 256 * 1024;
const FETCH_TIMEOUT_MS = 5000;
const IMAGE_PATH_PREFIX = '/ui/images/';

export class ImageError extends Error {}

/** A logo given as a URL (fetched) rather than a file (read). */
export const isImageUrl = (source: string): boolean => /^https?:\/\//i.test(source);

/** The image's type from its first bytes; never from a file name or a server's Content-Type. */
export function sniffImage(bytes: Buffer): ServedImage['type'] | undefined {
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && bytes.toString('latin1', 0, 4) === 'RIFF' && bytes.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp';
  const head = bytes
    .subarray(0, 1024)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(head)) return 'image/svg+xml';
  return undefined;
}

function served(bytes: Buffer, where: string): ServedImage {
  if (bytes.length === 0) throw new ImageError(`${where}: empty`);
  if (bytes.length > MAX_IMAGE_BYTES) throw new ImageError(`${where}: larger than ${MAX_IMAGE_BYTES / 1024} KiB`);
  const type = sniffImage(bytes);
  if (!type) throw new ImageError(`${where}: not a PNG, JPEG, WebP or SVG image`);
  const hash = createHash('sha256').update(bytes).digest('base64url').slice(0, 22);
  return { bytes, type, path: `${IMAGE_PATH_PREFIX}${hash}` };
}

/** Reads at most MAX_IMAGE_BYTES of a response, refusing more (a missing or false Content-Length changes nothing). */
async function readCapped(res: Response, where: string): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_IMAGE_BYTES)
    throw new ImageError(`${where}: larger than ${MAX_IMAGE_BYTES / 1024} KiB`);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > MAX_IMAGE_BYTES) throw new ImageError(`${where}: larger than ${MAX_IMAGE_BYTES / 1024} KiB`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

/** An image from a URL (fetched once, here) or a file (relative to `baseDir`), checked for size and type. */
export async function loadImage(source: string, baseDir: string, where: string): Promise<ServedImage> {
  if (isImageUrl(source)) {
    let res: Response;
    try {
      res = await fetch(source, {
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
        redirect: 'follow',
        headers: { Accept: 'image/png, image/jpeg, image/webp, image/svg+xml' },
      });
    } catch (err) {
      throw new ImageError(
        `${where}: ${source} could not be fetched (${(err as Error).name === 'TimeoutError' ? 'no answer within 5 s' : (err as Error).message})`,
      );
    }
    if (!res.ok) {
      await res.body?.cancel();
      throw new ImageError(`${where}: ${source} answered ${res.status}`);
    }
    return served(await readCapped(res, `${where}: ${source}`), `${where}: ${source}`);
  }
  const file = isAbsolute(source) ? source : resolve(baseDir, source);
  try {
    if ((await stat(file)).size > MAX_IMAGE_BYTES)
      throw new ImageError(`${where}: ${file} is larger than ${MAX_IMAGE_BYTES / 1024} KiB`);
    return served(await readFile(file), `${where}: ${file}`);
  } catch (err) {
    if (err instanceof ImageError) throw err;
    throw new ImageError(
      `${where}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
}
