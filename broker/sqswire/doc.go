// Package sqswire puts Amazon SQS's API in front of every node of a
// cluster, so clients someone else wrote — boto3, the AWS CLI, the AWS
// SDKs for Go and JavaScript — send to, receive from and delete on the
// lab's own work queues.
//
// Node nI listens on port+I−1 and answers both of SQS's wire protocols:
// AWS JSON 1.0 (an X-Amz-Target header naming AmazonSQS.ACTION, as
// aws-sdk-go-v2 and the JavaScript SDK v3 speak it) and the older query
// protocol (form-encoded Action=ACTION with XML answers, as botocore 1.29
// and the AWS CLI 2.9 speak it). Every node answers for every queue: the
// node a request reaches forwards it to the queue's leader over the peer
// link; while the queue has no leader the answer is SQS's retryable
// ServiceUnavailable, so a client's retries carry it across a failover.
//
// Requests cross the broker's fault network under the client's name (an
// x-mqlab-client header, else the app/NAME of its User-Agent, else the
// User-Agent's first product, lower-cased), so faults reach SQS clients as
// they reach the lab's own:
//
//   - a killed node closes its listener and drops its connections: the
//     client has lost its endpoint until the node restarts;
//   - an isolated node stops answering; a slowed one answers late;
//   - a lost reply aborts the connection with the work done, so the
//     client retries: a send lands twice, a receive's messages come back
//     after their visibility timeout;
//   - a lost delete never reaches the queue, and the message comes back.
//
// Requests are not authenticated: signatures are accepted unchecked.
package sqswire
