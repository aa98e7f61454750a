//! [`classify`] against the `Value`-tree classifier it replaced, on well-formed, odd and malformed
//! bodies: the same outcome, error codes and messages included.

use serde_json::{Map, Value};

use super::*;

/// What the reference answers: (id, method, params); `Value::Null` and "" where there are none.
type Classified = (Value, String, Option<Map<String, Value>>);

/// The previous classifier, kept as the reference: parse a `Value`, then look at its members.
fn reference(body: &[u8]) -> Result<Classified, RpcError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| RpcError::new(code::PARSE_ERROR, format!("Parse error: the body is not valid JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        let what = if value.is_array() {
            "batches are not supported; send one message per POST"
        } else {
            "a JSON object was expected"
        };
        return Err(RpcError::new(code::INVALID_REQUEST, format!("Invalid Request: {what}")));
    };
    match object.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        _ => return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"jsonrpc\" must be \"2.0\"")),
    }
    let method = match object.remove("method") {
        None => None,
        Some(Value::String(m)) => Some(m),
        Some(_) => return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"method\" must be a string")),
    };
    match (method, object.remove("id")) {
        // A notification, as (null, method, None).
        (Some(method), None) => Ok((Value::Null, method, None)),
        (Some(method), Some(id @ (Value::String(_) | Value::Number(_)))) => {
            let params = object.remove("params");
            if params.as_ref().is_some_and(|p| !p.is_object()) {
                return Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"params\" must be an object"));
            }
            Ok((id, method, params.map(|p| p.as_object().cloned().unwrap())))
        }
        (Some(_), Some(_)) => {
            Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: \"id\" must be a string or an integer"))
        }
        // A response, as (null, "", None).
        (None, _) if object.contains_key("result") || object.contains_key("error") => {
            Ok((Value::Null, String::new(), None))
        }
        (None, _) => {
            Err(RpcError::new(code::INVALID_REQUEST, "Invalid Request: no \"method\", \"result\" or \"error\""))
        }
    }
}

fn check(body: &str) {
    let expected = reference(body.as_bytes());
    let ours = classify(body.as_bytes());
    match (ours, expected) {
        (Err(ours), Err(expected)) => assert_eq!(ours, expected, "body: {body}"),
        (Ok(Incoming::Notification { method }), Ok((Value::Null, expected, None))) => {
            assert_eq!(method, expected, "body: {body}")
        }
        (Ok(Incoming::Response), Ok((Value::Null, expected, None))) => assert_eq!(expected, "", "body: {body}"),
        (Ok(Incoming::Request { id, method, params }), Ok((expected_id, expected_method, expected_params))) => {
            assert_eq!((&id, method.as_ref()), (&expected_id, expected_method.as_str()), "body: {body}");
            let call = matches!(params, Some(Params::Call(_)));
            assert!(!call || method == TOOLS_CALL, "typed params for {method}: {body}");
            if method == TOOLS_CALL {
                let ours = params.map(Params::into_call);
                let expected = expected_params.map(|p| Params::Object(p).into_call());
                assert_eq!(ours, expected, "body: {body}");
            } else {
                assert_eq!(params.map(Params::into_object), expected_params, "body: {body}");
            }
        }
        (ours, expected) => panic!("body: {body}\nours: {ours:?}\nexpected: {expected:?}"),
    }
}

#[test]
fn well_formed_and_odd_messages_classify_as_before() {
    let bodies = [
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session","arguments":{"action":"status","session_id":"5acc7dd1"}}}"#,
        r#"{"id":2,"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"action":"status"},"name":"session"}}"#,
        r#"{"params":{"name":"session","arguments":{"action":"list"}},"id":"a","method":"tools/call","jsonrpc":"2.0"}"#,
        r#" { "jsonrpc" : "2.0" , "id" : 1 , "method" : "tools\/call" , "params" : { "name" : "ses\u0073ion" } } "#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":null,"x":[1,{"y":2}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"s","arguments":[1]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5,"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":{"a":1}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b","arguments":{},"arguments":{"c":1}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agent","arguments":{},"task":{"ttl":60000}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"task":{},"name":"agent"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agent","task":null}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agent","task":5}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agent","task":{"ttl":-1,"x":[]}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"agent","task":{"ttl":1},"task":{"ttl":2}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"x"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","cursor":null,"z":1},"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"name":"a"},"method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"method":"ping","method":"tools/call"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[],"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"claude/channel":{}}},"clientInfo":{"name":"c"}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"t"}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":-1,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":"\u00e9\n","method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":[]}"#,
        r#"{"jsonrpc":"2.0","method":null}"#,
        r#"{"jsonrpc":"2.0","method":1,"id":1}"#,
        r#"{"jsonrpc":"2.0","method":{"x":[]},"id":1}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"m"}}"#,
        r#"{"jsonrpc":"2.0","result":null}"#,
        r#"{"jsonrpc":"2.0","id":3}"#,
        r#"{"jsonrpc":"2.0"}"#,
        r#"{"id":1,"method":"x"}"#,
        r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
        r#"{"jsonrpc":2.0,"id":1,"method":"x"}"#,
        r#"{"jsonrpc":["2.0"],"id":1,"method":"x"}"#,
        r#"{"jsonrpc":"2\u002e0","id":1,"method":"x"}"#,
        r#"{"jsonrpc":"1.0","jsonrpc":"2.0","id":1,"method":"x"}"#,
        r#"{"jsonrpc":"2.0","jsonrpc":"1.0","id":1,"method":"x"}"#,
        r#"{"\u006asonrpc":"2.0","i\u0064":1,"\u006dethod":"tools/call","params":{"n\u0061me":"s"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","extra":{"deep":[[[{"a":[true,false,null,-0.5e-3]}]]]}}"#,
        "{}",
        "[]",
        r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
        "1",
        "-2.5",
        r#""x""#,
        "null",
        "true",
        " \n\t{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n",
    ];
    for body in bodies {
        check(body);
    }
}

#[test]
fn malformed_bodies_fail_with_the_same_parse_errors() {
    let deep =
        |n: usize| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","x":{}1{}}}"#, "[".repeat(n), "]".repeat(n));
    let bodies = [
        "".to_owned(),
        "   ".to_owned(),
        "{nope".to_owned(),
        "{".to_owned(),
        r#"{"jsonrpc":"2.0","#.to_owned(),
        r#"{"jsonrpc":"2.0",}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"} x"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}{}"#.to_owned(),
        r#"{1:2}"#.to_owned(),
        r#"[1,2"#.to_owned(),
        r#"[1,]"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":01,"method":"ping"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":01}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":1e400}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":1e400}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{"x":-}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":-}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":1.}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":"\ud800"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"z":"\ud800"}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":"\q"}"#.to_owned(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"tab\there\"}".to_owned(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"q\":\"nl\nhere\"}}".to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":tru}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":nul}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":{"a" 1}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":[1 2]}"#.to_owned(),
        deep(126),
        deep(127),
        deep(128),
        deep(300),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"s","arguments":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        ),
    ];
    for body in &bodies {
        check(body);
    }
    let invalid_utf8 = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}";
    assert_eq!(classify(invalid_utf8).unwrap_err(), reference(invalid_utf8).unwrap_err());
}

#[test]
fn tools_call_params_are_read_into_their_fields() {
    let body = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"session","arguments":{"action":"status"}}}"#;
    let Ok(Incoming::Request { params: Some(Params::Call(call)), .. }) = classify(body) else {
        panic!("tools/call params should be typed");
    };
    assert_eq!(call.name, Some(Member::Str(Cow::Borrowed("session"))));
    assert!(matches!(call.name, Some(Member::Str(Cow::Borrowed(_)))), "the name is borrowed from the body");
    assert_eq!(call.arguments, Some(serde_json::json!({"action": "status"})));
}

#[test]
fn the_task_member_of_tools_call_is_carried_typed() {
    let task_of = |body: &str| match classify(body.as_bytes()).unwrap() {
        Incoming::Request { params: Some(params), .. } => params.into_call().task,
        other => panic!("{other:?}"),
    };
    let call = |params: &str| format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
    assert_eq!(
        task_of(&call(r#"{"name":"a","task":{"ttl":60000}}"#)),
        Some(TaskParam::Requested { ttl_ms: Some(60000) })
    );
    assert_eq!(task_of(&call(r#"{"name":"a","task":{}}"#)), Some(TaskParam::Requested { ttl_ms: None }));
    assert_eq!(task_of(&call(r#"{"name":"a","task":null}"#)), None);
    assert_eq!(task_of(&call(r#"{"name":"a"}"#)), None);
    assert_eq!(task_of(&call(r#"{"name":"a","task":"soon"}"#)), Some(TaskParam::Invalid(Value::from("soon"))));
    assert!(matches!(task_of(&call(r#"{"name":"a","task":{"ttl":1.5}}"#)), Some(TaskParam::Invalid(_))));
}
