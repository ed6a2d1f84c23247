/**
 * Whether a POST that changes something comes from one of this service's own pages (a defence against
 * cross-site form posts, on top of whatever authorises the request itself). Browsers send `Origin` on
 * every POST, but our pages' `Referrer-Policy: no-referrer` makes them send `Origin: null` for our own
 * forms (Fetch, "serializing a request origin"), as a sandboxed frame anywhere would. `Sec-Fetch-Site`
 * (Fetch Metadata) is the browser's own account of where the request comes from, whatever the policy:
 * - another site or origin, by either header: refused;
 * - `Origin: null`: accepted only with `Sec-Fetch-Site: same-origin`;
 * - neither header: no browser form (browsers send Origin on POST) but a tool, which can set any header it
 *   likes, so refusing it protects nothing: accepted, and the request's own authorisation decides.
 */
export function isSameOriginPost(headers: { origin?: string; fetchSite?: string }, ownOrigin: string): boolean {
  const { origin, fetchSite } = headers;
  if (fetchSite !== undefined && fetchSite !== 'same-origin') return false;
  if (origin === undefined) return true;
  if (origin === 'null') return fetchSite === 'same-origin';
  return origin === ownOrigin;
}
