/**
 * A failure the holder can act on. Errors from the issuer keep their OAuth `error` and
 * `error_description`, e.g. "invalid_grant: invalid tx_code provided: 2 attempt(s) left".
 */
export class WalletError extends Error {
  readonly error?: string;
  readonly errorDescription?: string;
  readonly status?: number;

  constructor(message: string, details: { error?: string; errorDescription?: string; status?: number } = {}) {
    super(message);
    this.name = 'WalletError';
    this.error = details.error;
    this.errorDescription = details.errorDescription;
    this.status = details.status;
  }
}

/** Reads a JSON response; an OAuth error body (RFC 6749 §5.2) becomes a WalletError naming it. */
export async function jsonOrOAuthError(response: Response, what: string): Promise<Record<string, unknown>> {
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const { error, error_description: description } = (body ?? {}) as { error?: unknown; error_description?: unknown };
    if (typeof error === 'string') {
      const errorDescription = typeof description === 'string' ? description : undefined;
      throw new WalletError(errorDescription ? `${error}: ${errorDescription}` : error, {
        error,
        errorDescription,
        status: response.status,
      });
    }
    throw new WalletError(`${what} failed with HTTP ${response.status}`, { status: response.status });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new WalletError(`${what}: the response is not a JSON object`);
  }
  return body as Record<string, unknown>;
}
