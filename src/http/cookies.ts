import type { Request, Response } from 'express';

/**
 * A cookie the request came with, by name. One whose value is not percent-encoded UTF-8 is none: castsync
 * never sets such a value, and another application on the same host may have, so the next cookie of the
 * name (castsync's, sent after it) is read instead.
 */
export function cookieOf(req: Request, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        // Not one of castsync's: look further.
      }
    }
  }
  return undefined;
}

/**
 * Sets a cookie with `Path=/; HttpOnly`, the attributes given, and `Secure` when the request came over
 * https (behind a proxy, TRUST_PROXY tells) or the public URL is https: a proxy that ends TLS and is not
 * trusted (TRUST_PROXY unset) makes every request look like plain http, but the browser is on https.
 */
export function setCookie(
  req: Request,
  res: Response,
  publicUrl: string | undefined,
  cookie: { name: string; value: string; attributes: string },
): void {
  const secure = req.secure || publicUrl?.startsWith('https:') === true ? '; Secure' : '';
  res.append('Set-Cookie', `${cookie.name}=${cookie.value}; Path=/; HttpOnly; ${cookie.attributes}${secure}`);
}
