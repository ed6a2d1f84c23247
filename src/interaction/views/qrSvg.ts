import encodeQR from 'qr';

/** A scratch buffer for the path, grown when a larger code needs it (the writer is synchronous). */
let scratch = Buffer.allocUnsafe(16 * 1024);

/**
 * The QR code of a wallet link as an SVG: the `qr` package's encoder, and the dark modules written as
 * one path of horizontal runs (`M x y h w v1 h -w z`).
 *
 * - Byte mode, error correction M and a fixed mask skip the encoder's eight mask trials (most of a
 *   prompt page's CPU once; any mask gives a valid, scannable code). `qr` is faster than qrcode; the
 *   tests check its modules against qrcode's.
 * - The path is written digit by digit into a byte buffer: qrcode's own SVG writer, and the same path
 *   built by string concatenation, cost as much as the encoding itself (bench/micro.ts).
 */
export function qrSvg(text: string, margin = 1): string {
  // the margin is the encoder's border (light modules)
  const rows = encodeQR(text, 'raw', { ecc: 'medium', encoding: 'byte', mask: 0, border: margin });
  const side = rows.length;
  // at most one run per two modules, each at most "M999 999h999v1h-999z"
  const worst = Math.ceil((side * side) / 2) * 21;
  if (scratch.length < worst) scratch = Buffer.allocUnsafe(worst);
  const out = scratch;
  let p = 0;
  const digits = (v: number) => {
    if (v >= 100) out[p++] = 48 + Math.floor(v / 100);
    if (v >= 10) out[p++] = 48 + (Math.floor(v / 10) % 10);
    out[p++] = 48 + (v % 10);
  };
  for (let y = 0; y < side; y++) {
    const row = rows[y];
    for (let x = 0; x < side;) {
      if (!row[x]) {
        x++;
        continue;
      }
      let end = x + 1;
      while (end < side && row[end]) end++;
      const w = end - x;
      out[p++] = 0x4d; // M
      digits(x);
      out[p++] = 0x20;
      digits(y);
      out[p++] = 0x68; // h
      digits(w);
      out[p++] = 0x76; // v
      out[p++] = 0x31; // 1
      out[p++] = 0x68; // h
      out[p++] = 0x2d; // -
      digits(w);
      out[p++] = 0x7a; // z
      x = end;
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${side} ${side}" shape-rendering="crispEdges"><path fill="#fff" d="M0 0h${side}v${side}H0z"/><path fill="#000" d="${out.toString('latin1', 0, p)}"/></svg>`;
}
