import { WalletError } from './errors.js';

/** A network failure names the URL and its cause ("fetch failed" alone helps nobody). */
export async function reach(call: () => Promise<Response>, url: string): Promise<Response> {
  try {
    return await call();
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new WalletError(`could not reach ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
}

/** An http(s) URL, as request_uri and response_uri must be. */
export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}
