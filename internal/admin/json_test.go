package admin

import "testing"

func TestMarshalMatchesJacksonsPrettyPrinter(t *testing.T) {
	// The expected texts are ZooKeeper 3.8's AdminServer answers
	// (observers on a leader, and a reply with empty containers).
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"nested", object{
			{"synced_observers", 1},
			{"observers", []object{{
				{"remote_socket_address", "/127.0.0.1:53302"},
				{"sid", int64(3)},
				{"queued_packets_size", -233},
			}}},
			{"client_response", object{{"last_buffer_size", -1}}},
			{"command", "observers"},
			{"error", nil},
		}, `{
  "synced_observers" : 1,
  "observers" : [ {
    "remote_socket_address" : "/127.0.0.1:53302",
    "sid" : 3,
    "queued_packets_size" : -233
  } ],
  "client_response" : {
    "last_buffer_size" : -1
  },
  "command" : "observers",
  "error" : null
}`},
		{"empty", object{
			{"connections", []object{}},
			{"current_config", object{}},
			{"all_ports", []int{2288, 2289}},
			{"avg_latency", jdouble(0)},
			{"read_only", false},
		}, `{
  "connections" : [ ],
  "current_config" : { },
  "all_ports" : [ 2288, 2289 ],
  "avg_latency" : 0.0,
  "read_only" : false
}`},
		{"strings", object{{"initial_configuration", "a=1\nb=\"x\"\\\t\x01é/"}},
			"{\n  \"initial_configuration\" : \"a=1\\nb=\\\"x\\\"\\\\\\t\\u0001é/\"\n}"},
		{"empty root", object{}, "{ }"},
	} {
		if got := string(marshal(tc.v)); got != tc.want {
			t.Errorf("%s:\ngot\n%s\nwant\n%s", tc.name, got, tc.want)
		}
	}
}

func TestJavaDouble(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {1, "1.0"}, {0.5, "0.5"}, {2.3333333333333335, "2.3333333333333335"},
		{1234567, "1234567.0"}, {1e7, "1.0E7"}, {12345678.9, "1.23456789E7"}, {0.001, "0.001"}, {0.0001, "1.0E-4"}, {-1.5, "-1.5"},
	} {
		if got := javaDouble(tc.f); got != tc.want {
			t.Errorf("javaDouble(%v) = %s, want %s", tc.f, got, tc.want)
		}
	}
}

func TestResponseOrderFollowsZooKeeper(t *testing.T) {
	// A command's fields come first, then command and error; an error the
	// command put among its fields stays there (leader on a standalone
	// server), a request-level error follows command.
	r := newResponse("leader")
	r.put("error", "server is not initialized")
	if got, want := string(r.body()), "{\n  \"error\" : \"server is not initialized\",\n  \"command\" : \"leader\"\n}"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	r = newResponse("snapshot")
	r.fail(401, "Not authenticated")
	if got, want := string(r.body()), "{\n  \"command\" : \"snapshot\",\n  \"error\" : \"Not authenticated\"\n}"; got != want {
		t.Errorf("got %s want %s", got, want)
	}
}
