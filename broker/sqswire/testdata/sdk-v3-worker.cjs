// A worker on the JavaScript SDK v3 (@aws-sdk/client-sqs, the JSON
// protocol), driven line by line by TestJavaScriptSDKAcrossLeaderKill:
// it creates a queue, sends, is told the queue's leader was killed,
// sends again, then receives every message, extends its visibility,
// deletes it, and deletes the queue.
const readline = require("node:readline");
const sqs = require("@aws-sdk/client-sqs");

const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const next = async () => (await lines.next()).value;
const say = (x) => process.stdout.write((typeof x === "string" ? x : JSON.stringify(x)) + "\n");

function client(endpoint) {
  return new sqs.SQSClient({
    endpoint, region: "us-east-1", maxAttempts: 20, retryMode: "standard",
    credentials: { accessKeyId: "mqlab", secretAccessKey: "mqlab" },
    customUserAgent: [["app/js-worker"]],
  });
}

async function main() {
  let c = client(process.argv[2]);
  await c.send(new sqs.CreateQueueCommand({ QueueName: "orders", Attributes: { VisibilityTimeout: "2" } }));
  say("created");
  c = client(await next()); // a node that does not lead the queue
  const url = (await c.send(new sqs.GetQueueUrlCommand({ QueueName: "orders" }))).QueueUrl;
  const send = (i) => c.send(new sqs.SendMessageCommand({ QueueUrl: url, MessageBody: "order " + i,
    MessageAttributes: { n: { DataType: "Number", StringValue: String(i) } } }));
  for (let i = 0; i < 25; i++) await send(i);
  say("half");
  await next(); // the queue's leader is dead now
  for (let i = 25; i < 40; i++) await send(i);
  const entries = [];
  for (let i = 40; i < 50; i++) entries.push({ Id: "e" + i, MessageBody: "order " + i, MessageAttributes: { n: { DataType: "Number", StringValue: String(i) } } });
  const batch = await c.send(new sqs.SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
  if ((batch.Failed || []).length) throw new Error("batch send failed: " + JSON.stringify(batch.Failed));

  const seen = {};
  while (Object.keys(seen).length < 50) {
    const r = await c.send(new sqs.ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
      MessageSystemAttributeNames: ["ApproximateReceiveCount"], MessageAttributeNames: ["All"] }));
    for (const m of r.Messages || []) {
      if (m.MessageAttributes.n.StringValue !== m.Body.split(" ")[1]) throw new Error("attributes do not match: " + JSON.stringify(m));
      // A long job asks for more time before its visibility timeout runs out.
      await c.send(new sqs.ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 30 }));
      seen[m.Body] = m.Attributes.ApproximateReceiveCount;
      await c.send(new sqs.DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: m.ReceiptHandle }));
    }
  }
  say(seen);
  await c.send(new sqs.DeleteQueueCommand({ QueueUrl: url }));
  try {
    await c.send(new sqs.GetQueueUrlCommand({ QueueName: "orders" }));
    say("the deleted queue still has a URL");
  } catch (e) {
    say(e.name);
  }
}

// Reading stdin keeps node running: leave once done.
main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
