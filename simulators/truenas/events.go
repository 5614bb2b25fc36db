package truenas

// jobsCollection is the event collection clients subscribe to for job
// progress and completion.
const jobsCollection = "core.get_jobs"

func (s *Server) addSession(ss *session) {
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) removeSession(ss *session) {
	s.mu.Lock()
	delete(s.sessions, ss)
	s.mu.Unlock()
}

// jobEvent sends a job's "added" or "changed" event to every authenticated
// session subscribed to core.get_jobs.
func (s *Server) jobEvent(msg string, id int, fields map[string]any) {
	s.mu.Lock()
	var to []*session
	for ss := range s.sessions {
		to = append(to, ss)
	}
	s.mu.Unlock()
	for _, ss := range to {
		if user, _ := ss.identity(); user != "" && ss.event != nil && ss.subscribed(jobsCollection) {
			ss.event(msg, jobsCollection, id, fields)
		}
	}
}
