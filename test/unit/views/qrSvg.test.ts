import QRCode from 'qrcode';
import { decodeQR } from 'qr/decode.js';
import { describe, expect, it } from 'vitest';
import { qrSvg } from '../../../src/interaction/views/qrSvg.js';

/** The dark modules an SVG from qrSvg draws, read back from its path of runs. */
function modulesOf(svg: string): { side: number; dark: boolean[][] } {
  const side = Number(/viewBox="0 0 (\d+) \1"/.exec(svg)?.[1]);
  const dark = Array.from({ length: side }, () => new Array<boolean>(side).fill(false));
  const path = /<path fill="#000" d="([^"]*)"\/>/.exec(svg)![1];
  expect(path).toMatch(/^(M\d+ \d+h\d+v1h-\d+z)*$/);
  for (const [, x, y, w, back] of path.matchAll(/M(\d+) (\d+)h(\d+)v1h-(\d+)z/g)) {
    expect(back).toBe(w);
    for (let i = 0; i < Number(w); i++) dark[Number(y)][Number(x) + i] = true;
  }
  return { side, dark };
}

/** Pixels of the drawn modules (4 px each, a 4-module quiet zone), decoded by an independent decoder. */
function decode(dark: boolean[][]): string {
  const scale = 4;
  const quiet = 4;
  const n = (dark.length + 2 * quiet) * scale;
  const data = new Uint8Array(n * n * 3).fill(255);
  dark.forEach((row, y) =>
    row.forEach((on, x) => {
      if (!on) return;
      for (let dy = 0; dy < scale; dy++)
        for (let dx = 0; dx < scale; dx++)
          data.fill(
            0,
            (((y + quiet) * scale + dy) * n + (x + quiet) * scale + dx) * 3,
            (((y + quiet) * scale + dy) * n + (x + quiet) * scale + dx) * 3 + 3,
          );
    }),
  );
  return decodeQR({ width: n, height: n, data });
}

describe('qrSvg', () => {
  const texts = {
    'a wallet link by reference':
      'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example%2Fwallet%2Foffers%2FAbCdEfGhIjKlMnOpQrStUvWxYz012345',
    'a one-character text': 'x',
    'a long request (a code over 100 modules wide: three-digit coordinates)': `openid4vp://?request=${'eyJhbGciOiJFUzI1NiJ9'.repeat(50)}`,
    'text outside ASCII (UTF-8 bytes)': 'openid4vp://?client_id=caf\u00e9&x=\u{1F3E6}',
  };
  for (const [what, text] of Object.entries(texts)) {
    // qrSvg encodes with the qr package; qrcode, another encoder, must place the same modules
    it(`draws exactly the modules an independent encoder (qrcode) places, with a one-module margin, for ${what}`, () => {
      const svg = qrSvg(text);
      const { size, data } = QRCode.create([{ data: Buffer.from(text, 'utf8'), mode: 'byte' }], {
        errorCorrectionLevel: 'M',
        maskPattern: 0,
      }).modules;
      const { side, dark } = modulesOf(svg);
      expect(side).toBe(size + 2);
      for (let y = 0; y < side; y++) {
        for (let x = 0; x < side; x++) {
          const inside = x >= 1 && y >= 1 && x <= size && y <= size;
          expect(dark[y][x], `module ${x},${y}`).toBe(inside && data[(y - 1) * size + (x - 1)] === 1);
        }
      }
      expect(decode(dark.slice(1, -1).map((row) => row.slice(1, -1)))).toBe(text);
    });
  }

  it('is one <svg> element with a white background, nothing interpolated but numbers', () => {
    const svg = qrSvg('openid4vp://?request_uri=x');
    expect(svg).toMatch(
      /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 (\d+) \1" shape-rendering="crispEdges"><path fill="#fff" d="M0 0h\1v\1H0z"\/><path fill="#000" d="[Mhvz0-9 -]+"\/><\/svg>$/,
    );
  });
});
