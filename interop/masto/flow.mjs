// Drives Herald's Mastodon client API with masto.js, as an app does:
// registers apps, logs in through Herald's authorize page (plain HTTP,
// as a person's browser would post the form), and walks the accounts
// endpoints. interop/masto_test.go runs it against a recording proxy in
// front of Herald and validates every response against the Mastodon
// API's OpenAPI description. Loopback only: every URL comes from the
// environment the test sets.
//
// Environment: HERALD_URL (the proxy), HERALD_USER and HERALD_PASSWORD
// (the account to log in to), PEER_ACCT (user@host of the Fedify peer),
// AVATAR (a PNG file). Prints one line a step; exits 1 at the first
// failure.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createOAuthAPIClient, createRestAPIClient } from "masto";

const base = process.env.HERALD_URL;
const user = process.env.HERALD_USER;
const password = process.env.HERALD_PASSWORD;
const peerAcct = process.env.PEER_ACCT;
const avatar = readFileSync(process.env.AVATAR);

function step(name, detail = "") {
  console.log(`ok ${name}${detail ? ": " + detail : ""}`);
}
function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

// authorize logs in through the authorize page and returns the code:
// from the redirect, or from the page for the out-of-band URI.
async function authorize(app, redirectUri, scope, pkce) {
  const q = new URLSearchParams({ client_id: app.clientId, redirect_uri: redirectUri, response_type: "code", scope, state: "s1" });
  if (pkce) {
    q.set("code_challenge", pkce.challenge);
    q.set("code_challenge_method", "S256");
  }
  const page = await fetch(`${base}/oauth/authorize?${q}`, { redirect: "manual" });
  check(page.status === 200, `authorize page ${page.status}`);
  const html = await page.text();
  const csrf = html.match(/name="csrf" value="([^"]+)"/)?.[1];
  check(csrf, "the authorize page has a CSRF token");
  const cookie = page.headers.get("set-cookie").split(";")[0];
  const form = new URLSearchParams(q);
  form.set("csrf", csrf);
  form.set("username", user);
  form.set("password", password);
  form.set("decision", "approve");
  const res = await fetch(`${base}/oauth/authorize`, {
    method: "POST", redirect: "manual", body: form,
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
  });
  if (redirectUri === "urn:ietf:wg:oauth:2.0:oob") {
    check(res.status === 200, `oob page ${res.status}`);
    return (await res.text()).match(/<code class="code">([^<]+)<\/code>/)[1];
  }
  check(res.status === 302, `authorize answered ${res.status}`);
  const loc = new URL(res.headers.get("location"));
  check(loc.searchParams.get("state") === "s1", "the state comes back");
  return loc.searchParams.get("code");
}

function newPKCE() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

const anon = createRestAPIClient({ url: base });
const oauth = createOAuthAPIClient({ url: base });

const v2 = await anon.v2.instance.fetch();
check(v2.domain && v2.configuration.statuses.maxCharacters > 0, "v2 instance");
step("instance v2", `${v2.domain} ${v2.version} api_versions ${JSON.stringify(v2.apiVersions)}`);
const v1 = await anon.v1.instance.fetch();
step("instance v1", v1.uri);
const metadata = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
check(metadata.code_challenge_methods_supported.includes("S256"), "S256 advertised");
step("oauth metadata");

const redirect = "http://127.0.0.1:9/callback";
const app = await anon.v1.apps.create({ clientName: "masto.js CI", redirectUris: `${redirect}\nurn:ietf:wg:oauth:2.0:oob`, scopes: "read write follow push", website: "https://github.com/neet/masto.js" });
check(app.clientId && app.clientSecret, "app credentials");
step("apps.create", app.id);

// With PKCE.
const pkce = newPKCE();
const code = await authorize(app, redirect, "read write follow", pkce);
const token = await oauth.token.create({ grantType: "authorization_code", clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: redirect, code, codeVerifier: pkce.verifier });
check(token.scope === "read write follow", `token scope ${token.scope}`);
step("authorize with PKCE and token");

// Without PKCE, out of band.
const oobCode = await authorize(app, "urn:ietf:wg:oauth:2.0:oob", "read", null);
const oobToken = await oauth.token.create({ grantType: "authorization_code", clientId: app.clientId, clientSecret: app.clientSecret, redirectUri: "urn:ietf:wg:oauth:2.0:oob", code: oobCode });
step("authorize out of band without PKCE");

const masto = createRestAPIClient({ url: base, accessToken: token.accessToken });
const reader = createRestAPIClient({ url: base, accessToken: oobToken.accessToken });

const appSelf = await masto.v1.apps.verifyCredentials();
check(appSelf.name === "masto.js CI", "apps.verifyCredentials");
step("apps.verifyCredentials");

const me = await masto.v1.accounts.verifyCredentials();
check(me.username === user && me.source, "verifyCredentials");
step("accounts.verifyCredentials", me.id);

const updated = await masto.v1.accounts.updateCredentials({
  displayName: "Alice from masto.js", note: "Testing <Herald>", avatar: new Blob([avatar], { type: "image/png" }),
  fieldsAttributes: [{ name: "Client", value: "masto.js" }], locked: false,
});
check(updated.displayName === "Alice from masto.js" && updated.avatar.includes("/media/") && updated.fields[0].name === "Client", "updateCredentials");
step("accounts.updateCredentials with an avatar", updated.avatar);

const peer = await masto.v1.accounts.lookup({ acct: peerAcct });
check(peer.acct === peerAcct, `lookup ${peer.acct}`);
step("accounts.lookup", peer.id);
const found = await masto.v1.accounts.search.list({ q: "@" + peerAcct, resolve: true });
check(found.some((a) => a.id === peer.id), "search resolves the peer");
step("accounts.search with resolve");

const rel = await masto.v1.accounts.$select(peer.id).follow();
check(rel.requested || rel.following, "follow");
step("accounts.follow", JSON.stringify({ requested: rel.requested, following: rel.following }));
const [rel2] = await masto.v1.accounts.relationships.fetch({ id: [peer.id] });
check(rel2.id === peer.id, "relationships");
step("accounts.relationships");

const followers = await masto.v1.accounts.$select(me.id).followers.list();
check(followers.some((a) => a.id === peer.id), `the peer is among the followers: ${followers.map((a) => a.acct)}`);
step("accounts.followers", String(followers.length));
const following = await masto.v1.accounts.$select(me.id).following.list();
step("accounts.following", String(following.length));
await masto.v1.accounts.$select(peer.id).fetch();
step("accounts.fetch");

// What apps load at start.
await masto.v1.preferences.fetch();
await masto.v1.customEmojis.list();
await masto.v2.filters.list();
await masto.v1.followedTags.list();
await masto.v1.lists.list();
await masto.v1.announcements.list();
await masto.v1.followRequests.list();
await masto.v1.blocks.list();
await masto.v1.mutes.list();
await masto.v1.markers.create({ home: { lastReadId: "1" } });
const markers = await masto.v1.markers.fetch({ timeline: ["home"] });
check(markers.home.lastReadId === "1", "markers");
step("start-up lists, preferences, markers");

// A token without write cannot follow.
try {
  await reader.v1.accounts.$select(peer.id).follow();
  throw new Error("a read-only token followed");
} catch (e) {
  check(e.statusCode === 403, `a read-only token got ${e.statusCode}: ${e.message}`);
}
step("a token without write gets 403");

await oauth.revoke({ clientId: app.clientId, clientSecret: app.clientSecret, token: oobToken.accessToken });
try {
  await reader.v1.accounts.verifyCredentials();
  throw new Error("a revoked token worked");
} catch (e) {
  check(e.statusCode === 401, `a revoked token got ${e.statusCode}`);
}
step("revoke");

// ---- Streaming (issue 28 part 3; branch stream) -------------------------
// Kept apart from the REST steps above, which another branch extends. The
// Fedify peer's public post streams over WebSocket from the URL the v2
// instance advertises, as masto.js's streaming client connects to it
// (the token as Sec-WebSocket-Protocol). Needs PEER_URL (the peer's
// base URL) and HERALD_ACTOR (the logged-in actor's id).
{
  const { createStreamingAPIClient } = await import("masto"); // here, so that the imports above stay the REST flow's
  const streaming = createStreamingAPIClient({ streamingApiUrl: v2.configuration.urls.streaming, accessToken: token.accessToken, retry: false });
  await streaming.prepare();
  const seen = [];
  const consume = async (sub) => {
    for await (const e of sub) seen.push(e);
  };
  const subs = [streaming.user.subscribe(), streaming.public.remote.subscribe()];
  const consumers = subs.map((sub) => consume(sub).catch((e) => seen.push({ failed: e })));
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const waitFor = async (pred, what, tries = 300) => {
    for (let i = 0; i < tries; i++) {
      const failed = seen.find((e) => e.failed);
      if (failed) throw failed.failed;
      const e = seen.find(pred);
      if (e) return e;
      await sleep(100);
    }
    return null;
  };
  // The subscriptions are live once one of alice's own posts streams to
  // her (a post made before the server read the subscribe message does
  // not stream: post again).
  let mine = null;
  for (let i = 0; i < 10 && !mine; i++) {
    const st = await masto.v1.statuses.create({ status: `Streaming from masto.js ${i}`, visibility: "public" });
    mine = await waitFor((e) => e.event === "update" && e.stream[0] === "user" && e.payload.id === st.id, "own post", 20);
  }
  check(mine, "alice's own post streamed to her user stream");
  step("streaming: the user's own post", mine.payload.id);

  const sent = await (await fetch(`${process.env.PEER_URL}/control/send`, {
    method: "POST", headers: { "content-type": "application/json" },
    body: JSON.stringify({ note: "<p>Streamed from the Fedify peer</p>", target: process.env.HERALD_ACTOR, public: true }),
  })).json();
  check(sent.sent, `the peer sent its note: ${JSON.stringify(sent)}`);
  const fromPeer = (stream) => (e) => e.event === "update" && e.stream[0] === stream && e.payload.account.acct === peerAcct &&
    e.payload.content.includes("Streamed from the Fedify peer");
  const home = await waitFor(fromPeer("user"), "the peer's post on user");
  const pub = await waitFor(fromPeer("public:remote"), "the peer's post on public:remote");
  check(home && pub, `the peer's post streamed on user (${Boolean(home)}) and public:remote (${Boolean(pub)})`);
  step("streaming: the peer's post on user and public:remote", home.payload.uri);
  streaming.close();
  await Promise.allSettled(consumers);
}
// ---- end of Streaming ----------------------------------------------------
console.log("done");
