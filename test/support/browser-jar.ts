import { expect } from "vitest";
/** One hop of a followed request: where it went, and what came back. */
export interface Hop {
  url: string;
  status: number;
  location: string | null;
  setCookie: string[];
}

/** The last answer of a followed chain, with every hop on the way. */
export interface Followed {
  url: string;
  status: number;
  text: string;
  hops: Hop[];
}

/**
 * A browser without a screen: a cookie jar (all hosts here are 127.0.0.1, and cookies do not
 * tell ports apart, as browsers do not) and GET requests whose redirects it follows by hand,
 * sending the cookies each path may see.
 * @example const jar = browserJar(); const end = await jar.follow(startLink);
 */
export function browserJar() {
  const cookies = new Map<string, { value: string; path: string }>();
  function cookieHeader(url: URL): string {
    return [...cookies]
      .filter(([, c]) => url.pathname.startsWith(c.path))
      .map(([name, c]) => `${name}=${c.value}`)
      .join("; ");
  }
  function keep(setCookie: string[]) {
    for (const line of setCookie) {
      const [pair, ...attrs] = line.split(";").map((s) => s.trim());
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const path = attrs.find((a) => /^path=/i.test(a))?.slice(5) || "/";
      const gone = attrs.some((a) => /^max-age=0$/i.test(a)) || pair!.slice(eq + 1) === "";
      if (gone) cookies.delete(name);
      else cookies.set(name, { value: pair!.slice(eq + 1), path });
    }
  }
  return {
    cookies,
    /**
     * GETs `url` and follows redirects (at most 20), keeping the cookies on the way; stops
     * before a URL `until` accepts (status 0, that URL: the test takes it from there).
     */
    async follow(
      url: string,
      opts: { until?: (url: string) => boolean; headers?: Record<string, string> } = {},
    ): Promise<Followed> {
      const { until, headers = {} } = opts;
      const hops: Hop[] = [];
      let at = new URL(url);
      for (let i = 0; i < 20; i++) {
        if (i > 0 && until?.(at.toString()))
          return { url: at.toString(), status: 0, text: "", hops };
        const cookie = cookieHeader(at);
        const res = await fetch(at, {
          redirect: "manual",
          headers: { ...headers, ...(cookie && { cookie }) },
        });
        const setCookie = res.headers.getSetCookie();
        keep(setCookie);
        const location = res.headers.get("location");
        hops.push({ url: at.toString(), status: res.status, location, setCookie });
        if (res.status < 300 || res.status >= 400 || !location) {
          return { url: at.toString(), status: res.status, text: await res.text(), hops };
        }
        await res.body?.cancel();
        at = new URL(location, at);
      }
      throw new Error(`more than 20 redirects from ${url}`);
    },
  };
}

export type BrowserJar = ReturnType<typeof browserJar>;

/**
 * Follows `url` in `jar` and checks that the page refused it: `status`, a text naming `words`
 * and saying nothing was changed, and `stored()` reading the same before and after.
 * @example await expectRefused(`${url}/oauth/redirect/google?code=x`, 400, /Missing state/, vars);
 */
export async function expectRefused(
  url: string,
  status: number,
  words: RegExp,
  stored: () => Promise<unknown>,
  jar = browserJar(),
): Promise<Followed> {
  const before = await stored();
  const page = await jar.follow(url);
  expect(page.status).toBe(status);
  expect(page.text).toMatch(words);
  expect(page.text).toMatch(/Nothing was changed/);
  expect(await stored()).toEqual(before);
  return page;
}
