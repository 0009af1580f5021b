//! A pushed op is stored as the text the device sent (not encoded again by
//! the server) when it has the op's shape and nothing more, written
//! compactly; an op with a top-level field `Op` does not have, or padded
//! with whitespace, is stored as the server encodes it. Either way catch-up
//! serves the op itself, on both stores.

use kairos_proto::{ClientMsg, Op, ServerMsg, encode};
use rusqlite::Connection;

use crate::support::{Maker, Server};

/// The stored JSON of the account's ops, by seq.
async fn stored(server: &Server, account: &str) -> Vec<String> {
    const SQL: &str = "SELECT op_json FROM ops WHERE account = $1 ORDER BY seq";
    if let Some(url) = &server.database {
        // PostgreSQL's `ops` names the account by its number (migration 0011).
        const PG: &str = "SELECT op_json FROM ops
                          WHERE account_num = (SELECT num FROM accounts WHERE id = $1) ORDER BY seq";
        let c = crate::pg::client(url).await;
        let rows = c.query(PG, &[&account]).await.unwrap();
        let out = rows.iter().map(|r| r.get::<_, String>(0)).collect();
        c.close().await;
        return out;
    }
    let c = Connection::open(kairos_server::store::db_path(&server.data)).unwrap();
    let mut st = c.prepare(&SQL.replace("$1", "?1")).unwrap();
    st.query_map([account], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[tokio::test]
async fn a_pushed_ops_own_text_is_stored_and_served_as_the_op() {
    let server = Server::start(&[]).await;
    let (id, token) = server.device("alice", "laptop").await;
    let mut m = Maker::new(&id);
    let ops: Vec<Op> = vec![m.dismiss("k1"), m.calendar("c1", "Work"), m.dismiss("k2")];
    let text = |op: &Op| serde_json::to_string(op).unwrap();
    // As a device might write them: the first with its fields in another
    // order, a field `Op` does not have in the second, the third as we
    // encode it but padded with spaces and a newline.
    let sent = [
        serde_json::to_string(&serde_json::to_value(&ops[0]).unwrap()).unwrap(),
        text(&ops[1]).replacen('{', "{\"later\":{\"x\":[1,2]},", 1),
        text(&ops[2]).replace(",\"", ", \n \""),
    ];
    assert_ne!(sent[0], text(&ops[0]), "a Value writes its keys sorted");
    let mut a = server.connect(&token).await;
    a.hello(0).await;
    a.send_raw(format!(
        r#"{{"v":1,"t":"push","ops":[{}]}}"#,
        sent.join(",")
    ))
    .await;
    match a.recv().await {
        ServerMsg::Pushed { results } => {
            assert_eq!(results.iter().map(|r| r.seq).collect::<Vec<_>>(), [1, 2, 3]);
        }
        other => panic!("expected pushed, got {other:?}"),
    }
    assert_eq!(
        stored(&server, "alice").await,
        [sent[0].clone(), text(&ops[1]), text(&ops[2])],
        "the device's text, except for the op with a field of its own and the padded one"
    );

    // Catch-up decodes the stored text: the ops themselves.
    let (_, b_token) = server.device("alice", "desktop").await;
    let mut b = server.connect(&b_token).await;
    let got = b.hello(0).await.ops;
    assert_eq!(got.into_iter().map(|s| s.op).collect::<Vec<_>>(), ops);
    // And a repeated id is answered with its first seq, not stored again.
    a.send(&ClientMsg::Push {
        ops: vec![ops[0].clone()],
    })
    .await;
    match a.recv().await {
        ServerMsg::Pushed { results } => assert_eq!(results[0].seq, 1),
        other => panic!("expected pushed, got {other:?}: {}", encode(&other)),
    }
    assert_eq!(stored(&server, "alice").await.len(), 3);
}
