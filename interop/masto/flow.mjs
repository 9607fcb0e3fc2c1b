// Drives Herald's Mastodon client API with masto.js, as an app does:
// registers apps, logs in through Herald's authorize page (plain HTTP,
// as a person's browser would post the form), and walks the accounts
// endpoints. interop/masto_test.go runs it against a recording proxy in
// front of Herald and validates every response against the Mastodon
// API's OpenAPI description. Loopback only: every URL comes from the
// environment the test sets.
//
// Environment: HERALD_URL (the proxy), HERALD_USER and HERALD_PASSWORD
// (the account to log in to), HERALD_ACTOR (that account's actor id),
// PEER_ACCT (user@host of the Fedify peer), PEER_URL (the peer's base URL,
// whose control API makes the peer post, like and boost), AVATAR (a PNG
// file). Prints one line a step; exits 1 at the first failure.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { createOAuthAPIClient, createRestAPIClient } from "masto";

const base = process.env.HERALD_URL;
const user = process.env.HERALD_USER;
const password = process.env.HERALD_PASSWORD;
const peerAcct = process.env.PEER_ACCT;
const peerURL = process.env.PEER_URL;
const heraldActor = process.env.HERALD_ACTOR;
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

// peerSend makes the Fedify peer send an activity (or a note) to Herald's
// account through its control API; the answer has the activity's id.
async function peerSend(body) {
  const res = await fetch(`${peerURL}/control/send`, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ target: heraldActor, ...body }),
  });
  check(res.ok, `the peer's send answered ${res.status}: ${await res.clone().text()}`);
  return await res.json();
}

// peerGot waits until the peer's inbox received an activity that match
// accepts (the inbox list is oldest first) and returns it.
async function peerGot(what, match) {
  return await eventually(what, async () => {
    const list = await (await fetch(`${peerURL}/control/inbox`)).json();
    return list.map((r) => r.activity).find((a) => a && typeof a === "object" && match(a));
  });
}

// eventually retries probe (deliveries and the inbox's queue take a
// moment) until it returns something, for up to 30 seconds.
async function eventually(what, probe) {
  for (let i = 0; i < 150; i++) {
    const got = await probe();
    if (got) return got;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gave up waiting for ${what}`);
}

const objectOf = (a) => (typeof a.object === "object" && a.object !== null ? a.object : {});

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

// Statuses: an image with alt text, a post with a content warning, a
// language and the image; a poll.
const media = await masto.v2.media.create({ file: new Blob([avatar], { type: "image/png" }), description: "A square" });
check(media.type === "image" && media.description === "A square" && media.url, `media ${JSON.stringify(media)}`);
const described = await masto.v1.media.$select(media.id).update({ description: "A square of colours" });
check(described.description === "A square of colours", "media update");
await masto.v1.media.$select(media.id).fetch();
step("v2.media.create with alt text, media update", media.id);

const post = await masto.v1.statuses.create({
  status: "Hello from masto.js #herald", spoilerText: "A test", mediaIds: [media.id], language: "en", visibility: "public",
});
check(post.spoilerText === "A test" && post.sensitive && post.language === "en" && post.mediaAttachments[0]?.description === "A square of colours" &&
  post.tags[0]?.name === "herald", `posted ${JSON.stringify(post)}`);
const created = await peerGot("the Create of the post", (a) => a.type === "Create" && objectOf(a).id === post.uri);
const note = objectOf(created);
check(note.summary === "A test" && JSON.stringify(note.attachment).includes("A square of colours"), `the peer got ${JSON.stringify(note)}`);
step("statuses.create with a content warning and an image; the peer got the Create", post.id);

const asked = await masto.v1.statuses.create({ status: "Tea or coffee?", poll: { options: ["Tea", "Coffee"], expiresIn: 3600 } });
check(asked.poll?.options.length === 2 && !asked.poll.expired, "poll");
await masto.v1.polls.$select(asked.poll.id).fetch();
await peerGot("the Question", (a) => a.type === "Create" && objectOf(a).type === "Question" && objectOf(a).id === asked.uri);
step("statuses.create with a poll; the peer got a Question");

try {
  await masto.v1.statuses.create({ status: "Later", scheduledAt: "2099-01-01T00:00:00.000Z" });
  throw new Error("scheduled_at was accepted");
} catch (e) {
  check(e.statusCode === 422, `scheduled_at got ${e.statusCode}: ${e.message}`);
}
step("scheduled_at is refused with 422");

// The peer posts; the post reaches the home timeline; alice replies,
// favourites, boosts and bookmarks it.
const peerNote = await peerSend({ note: "<p>Hello from Fedify</p>", public: true });
const noteURI = peerNote.activity.object?.id ?? peerNote.activity.object;
const inHome = await eventually("the peer's post in the home timeline", async () =>
  (await masto.v1.timelines.home.list({ limit: 40 })).find((s) => s.uri === noteURI));
check(inHome.account.acct === peerAcct, `its account ${inHome.account.acct}`);
step("the peer's post is in the home timeline", inHome.id);
await masto.v1.timelines.public.list({ limit: 20 });
await masto.v1.timelines.public.list({ local: true, limit: 20 });
await masto.v1.timelines.tag.$select("herald").list();
await masto.v1.accounts.$select(peer.id).statuses.list({ limit: 20 });
await masto.v1.accounts.$select(me.id).statuses.list({ limit: 20, excludeReplies: true });
step("public, local, tag and account timelines");

const reply = await masto.v1.statuses.create({ status: `@${peerAcct} Hello back`, inReplyToId: inHome.id });
check(reply.inReplyToId === inHome.id && reply.inReplyToAccountId === peer.id, `reply ${JSON.stringify(reply)}`);
await peerGot("the reply", (a) => a.type === "Create" && objectOf(a).inReplyTo === noteURI);
const context = await masto.v1.statuses.$select(inHome.id).context.fetch();
check(context.descendants.some((s) => s.id === reply.id), "context");
step("a reply; the peer got it; context");

const faved = await masto.v1.statuses.$select(inHome.id).favourite();
check(faved.favourited && faved.favouritesCount === 1, "favourite");
await peerGot("the Like", (a) => a.type === "Like" && a.object === noteURI);
const boosted = await masto.v1.statuses.$select(inHome.id).reblog();
check(boosted.reblog?.id === inHome.id && boosted.reblog.reblogged, "reblog");
await peerGot("the Announce", (a) => a.type === "Announce" && a.object === noteURI);
await masto.v1.statuses.$select(inHome.id).bookmark();
check((await masto.v1.bookmarks.list()).some((s) => s.id === inHome.id), "bookmarks");
check((await masto.v1.favourites.list()).some((s) => s.id === inHome.id), "favourites");
await masto.v1.statuses.$select(inHome.id).favouritedBy.list();
await masto.v1.statuses.$select(inHome.id).rebloggedBy.list();
await masto.v1.statuses.$select(inHome.id).unreblog();
await masto.v1.statuses.$select(inHome.id).unbookmark();
const unfaved = await masto.v1.statuses.$select(inHome.id).unfavourite();
check(!unfaved.favourited && !unfaved.reblogged && !unfaved.bookmarked, "undone");
await peerGot("the Undo of the Like", (a) => a.type === "Undo" && objectOf(a).type === "Like");
step("favourite, reblog, bookmark and undo; the peer got Like, Announce, Undo");

const pinned = await masto.v1.statuses.$select(post.id).pin();
check(pinned.pinned, "pin");
await masto.v1.statuses.$select(post.id).unpin();
step("pin and unpin");

// A poll of the peer's: shown with its options; alice's vote goes to the peer.
const question = await peerSend({
  activity: {
    type: "Create", to: ["https://www.w3.org/ns/activitystreams#Public", heraldActor],
    object: {
      type: "Question", id: `${peerURL}/questions/${Date.now()}`, attributedTo: `${peerURL}/users/peer`, content: "<p>Cats or dogs?</p>",
      to: ["https://www.w3.org/ns/activitystreams#Public", heraldActor], endTime: new Date(Date.now() + 3600e3).toISOString(),
      oneOf: [{ type: "Note", name: "Cats", replies: { type: "Collection", totalItems: 0 } }, { type: "Note", name: "Dogs", replies: { type: "Collection", totalItems: 0 } }],
    },
  },
});
const questionURI = question.activity.object?.id;
const polled = await eventually("the peer's poll in the home timeline", async () =>
  (await masto.v1.timelines.home.list({ limit: 40 })).find((s) => s.uri === questionURI));
check(polled.poll?.options.map((o) => o.title).join() === "Cats,Dogs", `the poll ${JSON.stringify(polled.poll)}`);
const voted = await masto.v1.polls.$select(polled.poll.id).votes.create({ choices: [1] });
check(voted.voted && voted.ownVotes[0] === 1, "vote");
await peerGot("the vote", (a) => a.type === "Create" && objectOf(a).inReplyTo === questionURI && objectOf(a).name === "Dogs");
step("the peer's poll is shown; the vote went to the peer as a Note");

// The peer mentions, likes and boosts alice's post (it follows alice
// already): four kinds of notification.
await peerSend({
  activity: {
    type: "Create", to: [heraldActor],
    object: {
      type: "Note", id: `${peerURL}/mentions/${Date.now()}`, attributedTo: `${peerURL}/users/peer`, to: [heraldActor],
      content: `<p>@${user} hello</p>`, tag: [{ type: "Mention", href: heraldActor, name: `@${user}` }],
    },
  },
});
await peerSend({ activity: { type: "Like", object: post.uri } });
await peerSend({ activity: { type: "Announce", object: post.uri, to: ["https://www.w3.org/ns/activitystreams#Public"], cc: [heraldActor] } });
const kinds = ["mention", "follow", "favourite", "reblog"];
const notes = await eventually("four kinds of notification", async () => {
  const list = await masto.v1.notifications.list({ limit: 40 });
  return kinds.every((k) => list.some((n) => n.type === k && n.account.id === peer.id)) && list;
});
const mentions = await masto.v1.notifications.list({ types: ["mention"] });
check(mentions.length > 0 && mentions.every((n) => n.type === "mention" && n.status), "types[]");
const others = await masto.v1.notifications.list({ excludeTypes: ["mention"] });
check(others.every((n) => n.type !== "mention"), "exclude_types[]");
await masto.v1.notifications.$select(notes[0].id).fetch();
step("notifications of the peer's mention, follow, like and boost", notes.map((n) => n.type).join(","));
const grouped = await masto.v2.notifications.list();
check(grouped.notificationGroups.length >= 4 && grouped.accounts.some((a) => a.id === peer.id), `grouped ${JSON.stringify(grouped.notificationGroups.map((g) => g.type))}`);
await masto.v2.notifications.unreadCount.fetch();
step("grouped notifications (v2)", String(grouped.notificationGroups.length));
await masto.v1.conversations.list();
step("conversations");

// A list of the peer.
const list = await masto.v1.lists.create({ title: "Fedify" });
await masto.v1.lists.$select(list.id).accounts.create({ accountIds: [peer.id] });
const listed = await masto.v1.timelines.list.$select(list.id).list();
check(listed.some((s) => s.uri === noteURI), "the list timeline");
await masto.v1.lists.$select(list.id).accounts.list();
await masto.v1.lists.$select(list.id).remove();
step("a list with the peer and its timeline");

// Search v2 finds the peer by handle, the post by its URL, a hashtag.
const search = await masto.v2.search.list({ q: "@" + peerAcct, resolve: true });
check(search.accounts.some((a) => a.id === peer.id), "search v2 finds the peer");
const byURL = await masto.v2.search.list({ q: noteURI, resolve: true, type: "statuses" });
check(byURL.statuses.some((s) => s.uri === noteURI), "search v2 finds the post by its URL");
const tags = await masto.v2.search.list({ q: "#herald", type: "hashtags" });
check(tags.hashtags.some((t) => t.name === "herald"), "search v2 finds the hashtag");
step("search v2: the peer by handle, the post by URL, the hashtag");

// The edit goes out as an Update, the deletion as a Delete.
const source = await masto.v1.statuses.$select(post.id).source.fetch();
check(source.text === "Hello from masto.js #herald" && source.spoilerText === "A test", "source");
const edited = await masto.v1.statuses.$select(post.id).update({ status: "Edited from masto.js #herald", spoilerText: "A test", mediaIds: [media.id] });
check(edited.editedAt && edited.content.includes("Edited"), `edited ${JSON.stringify(edited)}`);
await peerGot("the Update", (a) => a.type === "Update" && objectOf(a).id === post.uri && objectOf(a).content.includes("Edited"));
await masto.v1.statuses.$select(post.id).history.list();
step("statuses.update; the peer got an Update; history");
const removed = await masto.v1.statuses.$select(reply.id).remove();
check(removed.text === `@${peerAcct} Hello back`, `delete answered ${JSON.stringify(removed)}`);
await peerGot("the Delete", (a) => a.type === "Delete" && JSON.stringify(a.object).includes(reply.uri));
try {
  await masto.v1.statuses.$select(reply.id).fetch();
  throw new Error("a deleted status is still there");
} catch (e) {
  check(e.statusCode === 404, `a deleted status got ${e.statusCode}`);
}
step("statuses.remove; the peer got a Delete; then 404");

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

// A token without write can neither follow nor post.
try {
  await reader.v1.accounts.$select(peer.id).follow();
  throw new Error("a read-only token followed");
} catch (e) {
  check(e.statusCode === 403, `a read-only token got ${e.statusCode}: ${e.message}`);
}
try {
  await reader.v1.statuses.create({ status: "Not allowed" });
  throw new Error("a read-only token posted");
} catch (e) {
  check(e.statusCode === 403, `a read-only token posting got ${e.statusCode}: ${e.message}`);
}
await reader.v1.timelines.home.list();
step("a token without write gets 403 to follow and to post, and reads");

await oauth.revoke({ clientId: app.clientId, clientSecret: app.clientSecret, token: oobToken.accessToken });
try {
  await reader.v1.accounts.verifyCredentials();
  throw new Error("a revoked token worked");
} catch (e) {
  check(e.statusCode === 401, `a revoked token got ${e.statusCode}`);
}
step("revoke");

// A report of the peer's post, forwarded: the peer gets a bare Flag from
// Herald's instance actor that names the account and the post, not alice.
const report = await masto.v1.reports.create({ accountId: peer.id, statusIds: [inHome.id], comment: "Reported from masto.js", forward: true, category: "spam" });
check(report.targetAccount.id === peer.id && report.forwarded && report.category === "spam" && report.statusIds[0] === inHome.id, `report ${JSON.stringify(report)}`);
const flag = await peerGot("the Flag", (a) => a.type === "Flag" && JSON.stringify(a).includes(noteURI));
check(!JSON.stringify(flag).includes(`/users/${user}`), `the Flag names the reporter: ${JSON.stringify(flag)}`);
step("reports.create, forwarded; the peer got a bare Flag", report.id);

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
