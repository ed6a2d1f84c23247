import { describe, expect, it } from 'vitest';
import { isSameOriginPost } from '../../../src/http/sameOrigin.js';

const OURS = 'https://vc.example';

describe('isSameOriginPost (issue 31, demo status forms): a POST from one of our pages, not from another site', () => {
  it.each([
    ['our origin', { origin: OURS, fetchSite: 'same-origin' }, true],
    ['our origin, a browser without Fetch Metadata', { origin: OURS }, true],
    [
      'Origin null from our own no-referrer page (Sec-Fetch-Site same-origin)',
      { origin: 'null', fetchSite: 'same-origin' },
      true,
    ],
    ["no browser at all (neither header): a tool, which the form's MAC alone authorises", {}, true],
    ['another site', { origin: 'https://evil.example', fetchSite: 'cross-site' }, false],
    ['another site, a browser without Fetch Metadata', { origin: 'https://evil.example' }, false],
    ['another origin of the same site', { origin: 'https://other.vc.example', fetchSite: 'same-site' }, false],
    ['our origin over http', { origin: 'http://vc.example' }, false],
    [
      'Origin null from another site (a sandboxed frame, a no-referrer page)',
      { origin: 'null', fetchSite: 'cross-site' },
      false,
    ],
    ['Origin null without Fetch Metadata: cannot tell, refused', { origin: 'null' }, false],
    ['Sec-Fetch-Site cross-site without Origin', { fetchSite: 'cross-site' }, false],
    ['Sec-Fetch-Site none (not from a page)', { fetchSite: 'none' }, false],
    ['our origin claimed, but the browser says cross-site', { origin: OURS, fetchSite: 'cross-site' }, false],
  ])('%s: %s', (_, headers, expected) => {
    expect(isSameOriginPost(headers, OURS)).toBe(expected);
  });
});
