/** One attempt of a webhook delivery over HTTP (src/webhooks/queue.ts decides when and what). */

/** The most of an answer read before the connection is let go: a receiver's body is never kept. */
const MAX_ANSWER_BYTES = 64 * 1024;

/** Why an attempt had no answer, in words that never carry the URL (it may hold credentials) or the body. */
function noAnswer(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: unknown } };
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const code = e.cause?.code;
  return typeof code === 'string' && /^[A-Z_]{2,40}$/.test(code)
    ? `no answer (${code})`
    : `no answer (${e.name === 'TypeError' ? 'the request could not be made' : 'error'})`;
}

/** A redirect is an answer like any other that is not 2xx: retried, never followed. */
export async function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<{ status?: number; error?: string }> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    // read at most 64 KiB of the answer, then let the connection go
    const reader = response.body?.getReader();
    let read = 0;
    while (reader && read < MAX_ANSWER_BYTES) {
      const chunk = await reader.read();
      if (chunk.done) break;
      read += chunk.value.byteLength;
    }
    await reader?.cancel().catch(() => undefined);
    return { status: response.status };
  } catch (err) {
    return { error: noAnswer(err, timeoutMs) };
  }
}
